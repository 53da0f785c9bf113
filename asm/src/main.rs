//! `spu-asm`: assemble `.spu` source into a `.bin`, or disassemble a `.bin`.

use anyhow::{Context, Result, bail};
use clap::{CommandFactory, Parser};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "spu-asm",
    version,
    about = "Assemble SPU kernels (.spu or .ptx -> .bin) or disassemble them (-d)",
    after_help = "Examples:\n  \
        spu-asm samples/vecadd.spu                 # writes samples/vecadd.bin\n  \
        spu-asm kernel.spu -o build/kernel.bin\n  \
        spu-asm kernel.spu --check                 # diagnostics only, no output file\n  \
        spu-asm kernels.ptx --entry matmul         # one kernel of a PTX file with several\n  \
        spu-asm launch.spu                         # a .spu file that includes a PTX kernel and binds it\n  \
        spu-asm launch.spu -I ../kernels           # ... and may include files from ../kernels\n  \
        spu-asm kernel.cu                          # CUDA C, compiled to PTX by clang\n  \
        spu-asm -d kernel.bin                      # source that re-assembles to the same bytes (it warns when a file name cannot be kept)\n  \
        spu-asm -d kernel.bin --no-loc             # cleaner listing without .file/.loc lines\n  \
        spu-asm kernel.spu -v --machine gtx480     # registers, shared memory, occupancy on a GTX 480\n\n\
        The language is described in asm/LANGUAGE.md and the instructions in isa-spec/ISA.md."
)]
struct Cli {
    /// Kernel source (.spu, .ptx or CUDA C .cu), or a binary (.bin) with -d.
    input: PathBuf,
    /// Output file (default: the input with extension .bin; with -d, standard output).
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Disassemble a .bin instead of assembling.
    #[arg(short, long)]
    disassemble: bool,
    /// With -d: leave out .file/.loc lines (the result no longer keeps the line table).
    #[arg(long, requires = "disassemble")]
    no_loc: bool,
    /// Check the source and report diagnostics without writing anything.
    #[arg(long, conflicts_with = "disassemble")]
    check: bool,
    /// The kernel to assemble when the file has several `.entry` blocks.
    #[arg(long, value_name = "NAME", conflicts_with = "disassemble")]
    entry: Option<String>,
    /// A folder whose files (and those below it) the source may `#include`, besides
    /// the input's own folder (repeatable).
    #[arg(short = 'I', value_name = "DIR", conflicts_with = "disassemble")]
    include_dirs: Vec<PathBuf>,
    /// The clang that compiles a CUDA C kernel (`.cu`, named here or included by a
    /// launch file) [default: $SPU_CLANG, else `clang` on PATH].
    #[arg(long, value_name = "PATH", conflicts_with = "disassemble")]
    clang: Option<PathBuf>,
    /// Print what one block holds (registers per thread, shared, local and
    /// parameter memory, CB ports) and how many blocks an SM of the machine holds
    /// at once, and what limits them.
    #[arg(short, long, conflicts_with = "disassemble")]
    verbose: bool,
    /// With -v: the machine (a preset, e.g. spu-4x4 or gtx480, or a TOML machine
    /// file) the occupancy is for [default: spu-4x4, as spu-emu's].
    #[arg(long, value_name = "PRESET|FILE")]
    machine: Option<String>,
    /// With -v: set a kernel parameter the sizes depend on (repeatable), as
    /// `spu-emu -D` does; others keep their defaults.
    #[arg(short = 'D', value_name = "NAME=VALUE")]
    defines: Vec<String>,
}

/// `-D` and `--machine` choose what the summary of `-v` is for, and nothing
/// else: without `-v` they are refused, saying so.
fn check_verbose_options(cli: &Cli) -> Result<(), clap::Error> {
    let what = match () {
        _ if cli.verbose => return Ok(()),
        _ if !cli.defines.is_empty() => "-D NAME=VALUE sets a parameter's value",
        _ if cli.machine.is_some() => "--machine chooses the machine",
        _ => return Ok(()),
    };
    Err(Cli::command().error(
        clap::error::ErrorKind::MissingRequiredArgument,
        format!(
            "{what} for the resource summary of -v only (the binary does not depend on it: spu-emu's -D and --machine choose them for a run): add -v, or leave the option out"
        ),
    ))
}

fn main() -> ExitCode {
    let cli = Cli::try_parse()
        .and_then(|cli| check_verbose_options(&cli).map(|()| cli))
        .unwrap_or_else(|e| spu_io::exit::after_parse(e));
    spu_io::interrupt::install_with_termination();
    match run(&cli) {
        // A signal that came as the work was finishing still ends it as the signal asks.
        Ok(()) => spu_io::exit::unless_signalled(ExitCode::SUCCESS, true),
        Err(e) => match spu_io::exit::special_code(e.as_ref()) {
            // The reader of standard output went away: end quietly, as `cat` would.
            Some(code @ spu_io::exit::CLOSED_PIPE) => ExitCode::from(code),
            code => {
                spu_io::reportln!("error: {e:#}");
                ExitCode::from(code.unwrap_or(1))
            }
        },
    }
}

/// Writes the output, refusing to overwrite the input or a file it included.
fn write_output(cli: &Cli, path: &Path, bytes: &[u8], included: &[PathBuf]) -> Result<()> {
    let mut inputs = vec![(format!("`{}`", cli.input.display()), cli.input.as_path())];
    for p in included {
        inputs.push((format!("`{}` (included)", p.display()), p.as_path()));
    }
    spu_io::paths::check_distinct(
        &inputs,
        &[(format!("the output `{}`", path.display()), path)],
    )?;
    Ok(spu_io::write_file(path, bytes)?)
}

fn run(cli: &Cli) -> Result<()> {
    // Standard output redirected to the input (`spu-asm -d k.bin >> k.bin`).
    spu_io::paths::check_distinct(
        &[(format!("`{}`", cli.input.display()), cli.input.as_path())],
        &[],
    )?;
    let bytes = spu_isa::format::read_input(&cli.input)?;
    if cli.disassemble {
        let module = spu_isa::format::read_module(&bytes).with_context(|| {
            format!(
                "`{}` is not a valid SPU binary",
                spu_io::quote::path(&cli.input)
            )
        })?;
        let text = spu_asm::disasm::disassemble(
            &module,
            spu_asm::disasm::Options {
                no_locations: cli.no_loc,
            },
        );
        if !cli.no_loc {
            for (i, name, listed) in spu_asm::disasm::renamed_files(&module) {
                spu_io::reportln!(
                    "warning: file {i}'s name `{name}` has a `\"` or a control character, which a `.file` string cannot hold; the listing names it \"{listed}\", so a kernel re-assembled from it names that file in its line table (rename the source file to keep the bytes)"
                );
            }
        }
        return match &cli.output {
            Some(out) => write_output(cli, out, text.as_bytes(), &[]),
            None => Ok(spu_io::output::print(&text)?),
        };
    }
    if bytes.is_empty() && spu_isa::format::is_binary(&cli.input, &bytes) {
        bail!(
            "`{}` is not a valid SPU binary: {}; reassemble it with `spu-asm`",
            spu_io::quote::path(&cli.input),
            spu_isa::format::FormatError::Empty
        );
    }
    if bytes.starts_with(b"\x7fELF") {
        bail!(
            "`{}` is a binary, not source; to disassemble it run `spu-asm -d {}`",
            spu_io::quote::path(&cli.input),
            spu_io::quote::path(&cli.input)
        );
    }
    let src = spu_io::input::text_from(&cli.input, bytes).map_err(|e| match e {
        spu_io::InputError::NotText { .. } => anyhow::anyhow!("{e}; is it a source file?"),
        e => e.into(),
    })?;
    if src.contains('\0') {
        bail!(
            "`{}` contains NUL bytes; is it a source file?",
            spu_io::quote::path(&cli.input)
        );
    }
    // The machine first: a bad `--machine` is reported before any work.
    let machine = match &cli.machine {
        Some(name) if cli.verbose => {
            let machine = spu_machine::named(name)?;
            machine.check_caches()?;
            Some((machine, format!("`{}`", spu_io::quote::escape(name))))
        }
        _ if cli.verbose => Some((
            spu_machine::Machine::default(),
            format!("`{}`", spu_machine::PRESETS[0].name),
        )),
        _ => None,
    };
    spu_io::paths::check_include_dirs(&cli.include_dirs)?;
    // A `.cu` file's text is the PTX clang writes for it, named `k.cu.ptx`.
    let (path, src, headers) =
        spu_asm::cuda::source_text(&cli.input, src, cli.clang.as_deref(), &cli.include_dirs)?;
    let options = spu_asm::Options {
        entry: cli.entry.clone(),
        include_dirs: cli.include_dirs.clone(),
        clang: cli.clang.clone(),
        ..spu_asm::Options::default()
    };
    match spu_asm::assemble_with_options_bytes(&path, &src, &options) {
        Ok((bin, warnings)) => {
            spu_io::report!("{}", warnings.render(&path, &src));
            let mut summary = None;
            let mut refused = None;
            if let Some((machine, name)) = &machine {
                let module = spu_isa::format::read_module(&bin)
                    .context("the assembled binary does not read back")?;
                let resources = spu_machine::resources::Resources::evaluate(&module, &cli.defines)
                    .map_err(|e| anyhow::anyhow!("the resource summary (-v): {e}"))?;
                summary = Some(resources.report(&module.name, machine, name));
                // The -D values are named only when the defaults would run.
                let by_defines = !cli.defines.is_empty()
                    && spu_machine::resources::Resources::evaluate(&module, &[])
                        .is_ok_and(|r| r.refusal(machine).is_none());
                refused = resources
                    .refusal(machine)
                    .map(|why| (why, name, by_defines));
            }
            // The summary follows the output: a refused output prints only its error.
            let mut written = None;
            if !cli.check {
                let out = cli
                    .output
                    .clone()
                    .unwrap_or_else(|| cli.input.with_extension("bin"));
                // An included `.cu` file is read; the PTX clang wrote for it is not a file.
                // So are the headers clang read for it.
                let included: Vec<PathBuf> = warnings
                    .files
                    .iter()
                    .map(|f| PathBuf::from(spu_asm::cuda::cuda_of(&f.name).unwrap_or(&f.name)))
                    .chain(headers.iter().chain(&warnings.headers).cloned())
                    .collect();
                write_output(cli, &out, &bin, &included)?;
                written = Some(out);
            }
            if let Some(text) = summary {
                // Beside a binary on standard output, the summary goes to the
                // terminal's other stream, never into the binary.
                let binary_on_stdout =
                    !cli.check && cli.output.as_deref().is_some_and(spu_io::output::is_stdout);
                if binary_on_stdout {
                    spu_io::report!("{text}");
                } else {
                    spu_io::output::print(&text)?;
                }
            }
            // The binary is written all the same: the launch depends on the
            // machine and the parameter values, which a run chooses again.
            if let Some((why, name, by_defines)) = refused {
                // A device (standard output, /dev/null) holds no binary to speak of.
                let note = match written
                    .filter(|o| !spu_io::output::is_stdout(o) && !o.starts_with("/dev"))
                {
                    Some(out) => format!(
                        " (`{}` is written all the same: a run chooses its -D values and machine again)",
                        spu_io::quote::escape(&out.display().to_string())
                    ),
                    None => String::new(),
                };
                bail!(
                    "spu-emu refuses this launch on {name}{}: {why}{note}",
                    if by_defines {
                        " with these -D values"
                    } else {
                        ""
                    }
                );
            }
            Ok(())
        }
        Err(diags) => {
            spu_io::report!("{}", diags.render(&path, &src));
            bail!(
                "`{}`: {} error{} found, nothing written",
                spu_io::quote::escape(&path),
                diags.error_count(),
                if diags.error_count() == 1 { "" } else { "s" }
            )
        }
    }
}
