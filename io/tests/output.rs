//! Outputs on targets that are not plain new files: devices, pipes, links, files
//! with a mode and an owner, directories. Run as root these tests check what used to
//! go wrong as root (replacing `/dev/null`); checks that need root say so when skipped.

use spu_io::{OutputError, OutputFile, write_file};
use std::io::Write;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::Path;

fn is_root() -> bool {
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// Names in `dir` other than `keep`: leftover temporaries.
fn others(dir: &Path, keep: &[&str]) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !keep.contains(&n.as_str()))
        .collect()
}

#[test]
fn dev_null_is_written_not_replaced() {
    if !is_root() {
        eprintln!("note: not root, so replacing /dev/null could not have happened anyway");
    }
    let before = std::fs::metadata("/dev/null").unwrap();
    write_file(Path::new("/dev/null"), b"{}\n").unwrap();
    let after = std::fs::metadata("/dev/null").unwrap();
    assert!(
        after.file_type().is_char_device(),
        "/dev/null is still a device"
    );
    assert_eq!((before.ino(), before.rdev()), (after.ino(), after.rdev()));
}

#[test]
fn a_full_device_is_an_error() {
    if !Path::new("/dev/full").exists() {
        eprintln!("skipped: no /dev/full");
        return;
    }
    let err = write_file(Path::new("/dev/full"), &[0u8; 100_000]).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("cannot write `/dev/full`: No space left"),
        "{err}"
    );
    assert!(
        std::fs::metadata("/dev/full")
            .unwrap()
            .file_type()
            .is_char_device()
    );
}

#[test]
fn a_link_stays_a_link_and_its_file_is_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real.json");
    let link = dir.path().join("link.json");
    std::fs::write(&real, b"old").unwrap();
    std::os::unix::fs::symlink("real.json", &link).unwrap();
    write_file(&link, b"new").unwrap();
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(std::fs::read(&real).unwrap(), b"new");
    assert_eq!(
        others(dir.path(), &["real.json", "link.json"]),
        Vec::<String>::new()
    );
}

#[test]
fn a_dangling_link_and_a_directory_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("gone.json");
    std::os::unix::fs::symlink("/nonexistent/target", &link).unwrap();
    assert!(matches!(
        write_file(&link, b"x"),
        Err(OutputError::DanglingLink { .. })
    ));
    assert!(matches!(
        write_file(dir.path(), b"x"),
        Err(OutputError::Directory { .. })
    ));
    assert_eq!(others(dir.path(), &["gone.json"]), Vec::<String>::new());
}

/// A name ending in `/` names a directory, whether or not it exists: refused by
/// the check made before any work (it used to pass, and the run failed at its
/// end with the system's "Not a directory").
#[test]
fn a_name_ending_in_a_slash_is_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["nothere/", "sub/x.json/", "nothere/.", "nothere/.."] {
        let e = spu_io::output::check_target(&dir.path().join(name)).unwrap_err();
        assert!(matches!(e, OutputError::EndsInSlash { .. }), "{e}");
        assert!(
            e.to_string().contains(
                "a name ending in `/`, `/.` or `/..` names a directory; give a file name"
            ),
            "{e}"
        );
    }
}

#[test]
fn the_mode_and_owner_of_a_replaced_file_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("out.bin");
    std::fs::write(&file, b"old").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
    let owner = if is_root() {
        std::os::unix::fs::chown(&file, Some(65534), Some(65534)).unwrap();
        Some(65534)
    } else {
        eprintln!("note: not root; the owner check is skipped");
        None
    };
    write_file(&file, b"new").unwrap();
    let m = std::fs::metadata(&file).unwrap();
    assert_eq!(m.permissions().mode() & 0o777, 0o640);
    if let Some(uid) = owner {
        assert_eq!((m.uid(), m.gid()), (uid, uid));
    }
    assert_eq!(std::fs::read(&file).unwrap(), b"new");
}

#[test]
fn a_new_file_gets_the_usual_mode_not_the_temporarys() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("new.json");
    write_file(&file, b"{}").unwrap();
    let probe = dir.path().join("probe");
    std::fs::write(&probe, b"").unwrap();
    let expected = std::fs::metadata(&probe).unwrap().permissions().mode() & 0o777;
    assert_eq!(
        std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
        expected
    );
}

#[test]
fn a_restricted_output_is_never_more_readable_than_its_mask() {
    let dir = tempfile::tempdir().unwrap();
    let new = dir.path().join("new.json");
    spu_io::output::write_file_restricted(&new, b"{}", 0o600).unwrap();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&new) & 0o077, 0, "{:o}", mode(&new));
    // A replaced file keeps its mode, narrowed.
    let old = dir.path().join("old.json");
    std::fs::write(&old, b"old").unwrap();
    std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o644)).unwrap();
    spu_io::output::write_file_restricted(&old, b"new", 0o640).unwrap();
    assert_eq!(mode(&old), 0o640);
    assert_eq!(std::fs::read(&old).unwrap(), b"new");
    // No mask to speak of: the usual behaviour.
    spu_io::output::write_file_restricted(&old, b"again", 0o7777).unwrap();
    assert_eq!(mode(&old), 0o640);
}

#[test]
fn a_planted_link_at_the_old_temporary_name_is_not_followed() {
    // The old writer used `.NAME.tmp<PID>` and followed whatever was there.
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, b"precious").unwrap();
    let planted = dir
        .path()
        .join(format!(".out.json.tmp{}", std::process::id()));
    std::os::unix::fs::symlink(&victim, &planted).unwrap();
    write_file(&dir.path().join("out.json"), b"data").unwrap();
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
}

#[test]
fn an_uncommitted_output_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("out.json");
    std::fs::write(&file, b"old").unwrap();
    {
        let mut out = OutputFile::create(&file).unwrap();
        out.write_all(&[1u8; 200_000]).unwrap();
        let visible = others(dir.path(), &["out.json"]).len();
        if visible > 0 {
            // Without O_TMPFILE the temporary has a name until it is dropped.
            eprintln!("note: this file system cannot make unnamed temporaries");
            assert_eq!(visible, 1, "one named temporary");
        }
    }
    assert_eq!(std::fs::read(&file).unwrap(), b"old");
    assert_eq!(others(dir.path(), &["out.json"]), Vec::<String>::new());
    let missing = dir.path().join("no/such/dir/out.json");
    assert!(matches!(
        write_file(&missing, b"x"),
        Err(OutputError::Io { .. })
    ));
}

#[test]
fn a_fifo_is_written_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    if !spu_io::testing::make_fifo(&fifo) {
        return;
    }
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap())
    };
    write_file(&fifo, b"through the pipe").unwrap();
    assert_eq!(reader.join().unwrap(), b"through the pipe");
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo()
    );
    assert_eq!(others(dir.path(), &["pipe"]), Vec::<String>::new());
}

#[test]
fn a_tool_replaces_a_link_in_its_own_folder_and_leaves_the_target() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("target.txt");
    std::fs::write(&target, "precious").unwrap();
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o600)).unwrap();
    let own = dir.path().join("own");
    std::fs::create_dir(&own).unwrap();
    let link = own.join("results.csv");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    spu_io::output::replace_file(&link, b"report", 0o640).unwrap();
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "precious");
    assert_eq!(
        std::fs::metadata(&target).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let m = std::fs::symlink_metadata(&link).unwrap();
    assert!(m.is_file(), "the link was replaced by a file");
    assert_eq!(std::fs::read_to_string(&link).unwrap(), "report");
    assert_eq!(m.permissions().mode() & 0o137, 0);
    // A dangling link is replaced too; a directory is refused.
    let dangling = own.join("plan.json");
    std::os::unix::fs::symlink(dir.path().join("none"), &dangling).unwrap();
    spu_io::output::replace_file(&dangling, b"{}", 0o600).unwrap();
    assert!(!dir.path().join("none").exists());
    assert_eq!(std::fs::read_to_string(&dangling).unwrap(), "{}");
    let sub = own.join("runs");
    std::fs::create_dir(&sub).unwrap();
    assert!(matches!(
        spu_io::output::replace_file(&sub, b"x", 0o600),
        Err(OutputError::Directory { .. })
    ));
    assert_eq!(
        others(&own, &["results.csv", "plan.json", "runs"]),
        Vec::<String>::new()
    );
}

/// Any name the file system takes is written (the temporary's own name, 12
/// bytes longer, is cut to fit), and a longer one is refused before any work,
/// naming the user's file.
#[test]
fn long_names_are_written_and_too_long_ones_refused_up_front() {
    let dir = tempfile::tempdir().unwrap();
    for len in [243, 244, 250, 255] {
        let name = format!(
            "{}.json",
            "é".repeat((len - 5) / 2) + &"a".repeat((len - 5) % 2)
        );
        assert_eq!(name.len(), len);
        let path = dir.path().join(&name);
        write_file(&path, b"{}\n").unwrap_or_else(|e| panic!("{len}: {e}"));
        assert_eq!(std::fs::read(&path).unwrap(), b"{}\n");
        assert!(others(dir.path(), &[]).iter().all(|n| !n.ends_with(".tmp")));
    }
    let name = "a".repeat(256);
    let err = spu_io::output::check_target(&dir.path().join(&name)).unwrap_err();
    assert!(
        matches!(err, OutputError::NameTooLong { bytes: 256, .. }),
        "{err}"
    );
    assert!(
        err.to_string().contains("at most 255; give a shorter name"),
        "{err}"
    );
}
