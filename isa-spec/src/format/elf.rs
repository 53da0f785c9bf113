//! ELF container: writes a [`Module`] with `object`'s low-level ELF writer and reads
//! it back with `object`'s ELF parser, validating every byte on the way in. What
//! each `.spu.*` section holds is [`super::sections`].

use object::elf;
use object::read::elf::{FileHeader, SectionHeader as _, Sym as _};
use object::write::elf::{FileHeader as WFileHeader, SectionHeader, Sym, Writer};

use super::bytes::{MAX_EXPR_NODES, MAX_STRING};
use super::output::MAX_INPUT_BYTES;
use super::sections::{
    ASSERT, BUFFERS, DEBUG, DMA, KERNEL, LINES, TEXT, assert_bytes, buffer_bytes, debug_bytes,
    dma_bytes, kernel_bytes, line_bytes, read_asserts, read_buffers, read_debug, read_dma,
    read_kernel, read_lines, version_of,
};
use super::{FormatError, Module, validate};
use crate::format::model::*;

/// The private `e_machine` value of SPU binaries ("SP" in ASCII).
pub const SPU_MACHINE: u16 = 0x5350;
/// Version of the metadata layout, stored in `e_flags` and in `.spu.kernel`. A
/// module with a 3-D launch grid is written as version 7 (a third grid expr, and
/// `.spu.assert` even if empty), one with preconditions as version 6 (with
/// `.spu.assert`), any other as version 5, so older readers refuse exactly the files
/// they would misread.
pub const FORMAT_VERSION: u32 = 7;
/// The oldest version this reader loads.
pub const OLDEST_FORMAT_VERSION: u32 = 5;

/// Serialises a module into an ELF64 file, refusing modules the reader would refuse.
/// Debug information that would take the file past [`MAX_INPUT_BYTES`] is left out
/// (the code then shows the registers' allocated names).
pub fn write_module(module: &Module) -> Result<Vec<u8>, FormatError> {
    let mut out = write_elf(module)?;
    if out.len() as u64 > MAX_INPUT_BYTES && !module.debug.is_empty() {
        let mut bare = module.clone();
        bare.debug = DebugInfo::default();
        out = write_elf(&bare)?;
    }
    if out.len() as u64 > MAX_INPUT_BYTES {
        return Err(FormatError::Invalid(format!(
            "the binary would be {} bytes, over the {} MiB the tools read",
            out.len(),
            MAX_INPUT_BYTES >> 20
        )));
    }
    Ok(out)
}

fn write_elf(module: &Module) -> Result<Vec<u8>, FormatError> {
    check_limits(module)?;
    validate::check(module)?;
    let text: Vec<u8> = module.code.iter().flat_map(|w| w.to_le_bytes()).collect();
    let mut meta = vec![
        (KERNEL, kernel_bytes(module)),
        (BUFFERS, buffer_bytes(module)),
        (DMA, dma_bytes(module)),
        (LINES, line_bytes(module)),
    ];
    if version_of(module) >= 6 {
        meta.push((ASSERT, assert_bytes(module)));
    }
    if !module.debug.is_empty() {
        meta.push((DEBUG, debug_bytes(module)));
    }

    let mut out = Vec::new();
    let mut w = Writer::new(object::Endianness::Little, true, &mut out);
    w.reserve_file_header();
    let text_index = w.reserve_section_index();
    let text_offset = w.reserve(text.len() as u64, 8);
    let text_name = w.add_section_name(TEXT.as_bytes());
    let mut meta_layout = Vec::new();
    for (name, data) in &meta {
        w.reserve_section_index();
        let offset = w.reserve(data.len() as u64, 8);
        meta_layout.push((w.add_section_name(name.as_bytes()), offset));
    }
    w.reserve_null_symbol_index();
    let label_names: Vec<_> = module
        .labels
        .iter()
        .map(|l| {
            w.reserve_symbol_index(Some(text_index));
            w.add_string(l.name.as_bytes())
        })
        .collect();
    let num_local = w.symbol_count();
    w.reserve_symbol_index(Some(text_index));
    let entry_name = w.add_string(module.name.as_bytes());
    w.reserve_symtab_section_index();
    w.reserve_symtab();
    w.reserve_strtab_section_index();
    w.reserve_strtab().map_err(elf_error)?;
    w.reserve_shstrtab_section_index();
    w.reserve_shstrtab().map_err(elf_error)?;
    w.reserve_section_headers();

    w.write_file_header(&WFileHeader {
        os_abi: elf::ELFOSABI_NONE,
        abi_version: 0,
        e_type: elf::ET_EXEC,
        e_machine: elf::Machine(SPU_MACHINE),
        e_entry: 0,
        e_flags: elf::FileFlags(version_of(module)),
    })
    .map_err(elf_error)?;
    w.write_align(8);
    w.write(&text);
    for (_, data) in &meta {
        w.write_align(8);
        w.write(data);
    }
    w.write_null_symbol();
    for (label, name) in module.labels.iter().zip(label_names) {
        w.write_symbol(&Sym {
            section: Some(text_index.0),
            st_name: w.string_offset(Some(name)),
            st_info: elf::SymbolInfo::new(elf::STB_LOCAL, elf::STT_NOTYPE),
            st_other: elf::SymbolOther(0),
            st_shndx: elf::SymbolSection(0),
            st_value: u64::from(label.pc) * 8,
            st_size: 0,
        });
    }
    w.write_symbol(&Sym {
        section: Some(text_index.0),
        st_name: w.string_offset(Some(entry_name)),
        st_info: elf::SymbolInfo::new(elf::STB_GLOBAL, elf::STT_FUNC),
        st_other: elf::SymbolOther(0),
        st_shndx: elf::SymbolSection(0),
        st_value: 0,
        st_size: text.len() as u64,
    });
    w.write_strtab();
    w.write_shstrtab();
    w.write_null_section_header();
    w.write_section_header(&SectionHeader {
        sh_name: w.section_name_offset(Some(text_name)),
        sh_type: elf::SHT_PROGBITS,
        sh_flags: elf::SHF_ALLOC | elf::SHF_EXECINSTR,
        sh_addr: 0,
        sh_offset: text_offset,
        sh_size: text.len() as u64,
        sh_link: 0,
        sh_info: 0,
        sh_addralign: 8,
        sh_entsize: 8,
    });
    for ((name, offset), (_, data)) in meta_layout.into_iter().zip(&meta) {
        w.write_section_header(&SectionHeader {
            sh_name: w.section_name_offset(Some(name)),
            sh_type: elf::SHT_PROGBITS,
            sh_flags: elf::SectionFlags(0),
            sh_addr: 0,
            sh_offset: offset,
            sh_size: data.len() as u64,
            sh_link: 0,
            sh_info: 0,
            sh_addralign: 8,
            sh_entsize: 0,
        });
    }
    w.write_symtab_section_header(num_local);
    w.write_strtab_section_header();
    w.write_shstrtab_section_header();
    Ok(out)
}

/// The record limits [`read_module`] enforces, checked before writing.
fn check_limits(m: &Module) -> Result<(), FormatError> {
    let strings = std::iter::once(&m.name)
        .chain(m.regs.iter().map(|r| &r.name))
        .chain(m.params.iter().map(|p| &p.name))
        .chain(m.shared.iter().map(|s| &s.name))
        .chain(m.buffers.iter().map(|b| &b.name))
        .chain(&m.lines.files)
        .chain(m.preconditions.iter().map(|a| &a.message))
        .chain(&m.debug.names);
    if let Some(s) = strings.into_iter().find(|s| s.len() > MAX_STRING as usize) {
        return Err(FormatError::Invalid(format!(
            "a name, path or message is {} bytes long (at most {MAX_STRING})",
            s.len()
        )));
    }
    let exprs = m
        .shared
        .iter()
        .flat_map(|s| &s.dims)
        .chain(m.buffers.iter().flat_map(|b| &b.dims))
        .chain(&m.launch.grid)
        .chain(&m.launch.block)
        .chain([&m.launch.iu_threads])
        .chain(m.dma.iter().flat_map(|d| &d.fields))
        .chain(m.preconditions.iter().flat_map(|a| [&a.lhs, &a.rhs]));
    for e in exprs {
        if e.node_count() > MAX_EXPR_NODES as usize {
            return Err(FormatError::Invalid(format!(
                "an expression has {} nodes (at most {MAX_EXPR_NODES})",
                e.node_count()
            )));
        }
        let named = e.nodes().iter().find_map(|n| match n {
            super::Node::Param(i) if usize::from(*i) >= m.params.len() => Some(*i),
            _ => None,
        });
        if let Some(i) = named {
            return Err(FormatError::Invalid(format!(
                "an expression names parameter #{i} of {}",
                m.params.len()
            )));
        }
    }
    if m.shared
        .iter()
        .map(|s| s.dims.len())
        .chain(m.buffers.iter().map(|b| b.dims.len()))
        .any(|n| n > 4)
    {
        return Err(FormatError::Invalid(
            "an array has more than 4 dimensions".into(),
        ));
    }
    if std::iter::once(&m.name)
        .chain(m.labels.iter().map(|l| &l.name))
        .any(|s| s.contains('\0'))
    {
        return Err(FormatError::Invalid(
            "a symbol name contains a NUL byte".into(),
        ));
    }
    if let Some(l) = m.labels.iter().find(|l| l.pc as usize > m.code.len()) {
        return Err(FormatError::Invalid(format!(
            "label `{}` points outside the code (instruction {} of {})",
            l.name,
            l.pc,
            m.code.len()
        )));
    }
    if let Some(d) = m
        .dma
        .iter()
        .find(|d| usize::from(d.buffer) >= m.buffers.len())
    {
        return Err(FormatError::Invalid(format!(
            "descriptor `.dma {}` names buffer #{} of {}",
            d.side,
            d.buffer,
            m.buffers.len()
        )));
    }
    if let Some(l) = m
        .lines
        .locs
        .iter()
        .find(|l| usize::from(l.file) >= m.lines.files.len())
    {
        return Err(FormatError::Invalid(format!(
            "line entry names file #{} of {}",
            l.file,
            m.lines.files.len()
        )));
    }
    Ok(())
}

fn elf_error(e: object::write::Error) -> FormatError {
    FormatError::Elf(e.to_string())
}

/// Parses and validates an SPU binary. Never panics on any input.
pub fn read_module(data: &[u8]) -> Result<Module, FormatError> {
    if data.is_empty() {
        return Err(FormatError::Empty);
    }
    if data.len() < 4 || &data[..4] != b"\x7fELF" {
        return Err(FormatError::NotElf);
    }
    let header = elf::FileHeader64::<object::Endianness>::parse(data).map_err(|e| {
        if data.get(4) == Some(&elf::ELFCLASS32.0) {
            FormatError::Foreign("32-bit ELF; SPU binaries are ELF64".into())
        } else {
            FormatError::Elf(e.to_string())
        }
    })?;
    let endian = header
        .endian()
        .map_err(|e| FormatError::Elf(e.to_string()))?;
    if header.e_ident().data != elf::ELFDATA2LSB {
        return Err(FormatError::Foreign(
            "big-endian ELF; SPU binaries are little-endian".into(),
        ));
    }
    let machine = header.e_machine(endian).0;
    if machine != SPU_MACHINE {
        return Err(FormatError::Foreign(format!(
            "ELF machine {machine:#06x} (SPU binaries use {SPU_MACHINE:#06x}); was it built for another target?"
        )));
    }
    let version = header.e_flags(endian).0;
    if !(OLDEST_FORMAT_VERSION..=FORMAT_VERSION).contains(&version) {
        return Err(FormatError::Version {
            found: version,
            supported: FORMAT_VERSION,
        });
    }
    let sections = header
        .sections(endian, data)
        .map_err(|e| FormatError::Elf(e.to_string()))?;
    let section = |name: &'static str| -> Result<&[u8], FormatError> {
        let (_, shdr) = sections
            .section_by_name(endian, name.as_bytes())
            .ok_or(FormatError::MissingSection(name))?;
        shdr.data(endian, data).map_err(|_| FormatError::Truncated {
            section: name,
            offset: 0,
        })
    };

    let text = section(TEXT)?;
    if text.len() % 8 != 0 {
        return Err(FormatError::Corrupt {
            section: TEXT,
            offset: text.len(),
            what: "size is not a multiple of 8 bytes".into(),
        });
    }
    let code: Vec<u64> = text
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
        .collect();

    let mut module = read_kernel(section(KERNEL)?, code, version)?;
    read_buffers(section(BUFFERS)?, &mut module)?;
    read_dma(section(DMA)?, &mut module)?;
    module.lines = read_lines(section(LINES)?)?;
    if version >= 6 {
        read_asserts(section(ASSERT)?, &mut module)?;
    }
    if let Some((_, shdr)) = sections.section_by_name(endian, DEBUG.as_bytes()) {
        let bytes = shdr
            .data(endian, data)
            .map_err(|_| FormatError::Truncated {
                section: DEBUG,
                offset: 0,
            })?;
        module.debug = read_debug(bytes, module.code.len())?;
    }

    let symbols = sections
        .symbols(endian, data, elf::SHT_SYMTAB)
        .map_err(|e| FormatError::Elf(e.to_string()))?;
    let mut entry = None;
    for sym in symbols.symbols().iter().skip(1) {
        let name = sym
            .name(endian, symbols.strings())
            .map_err(|e| FormatError::Elf(e.to_string()))?;
        let name = String::from_utf8(name.to_vec())
            .map_err(|_| FormatError::Elf("symbol name is not UTF-8".into()))?;
        if name.chars().any(spu_io::quote::is_hidden) {
            return Err(FormatError::Invalid(format!(
                "symbol name `{}` has control or invisible characters",
                spu_io::quote::shorten(&name)
            )));
        }
        let value = sym.st_value(endian);
        if sym.st_bind() == elf::STB_GLOBAL {
            entry = Some(name);
        } else {
            if value % 8 != 0 || value / 8 > module.code.len() as u64 {
                return Err(FormatError::Invalid(format!(
                    "label `{name}` points outside the code (byte {value})"
                )));
            }
            module.labels.push(Label {
                name,
                pc: (value / 8) as u32,
            });
        }
    }
    match entry {
        Some(name) if name == module.name => {}
        Some(name) => {
            return Err(FormatError::Invalid(format!(
                "entry symbol `{name}` does not match kernel `{}`",
                spu_io::quote::shorten(&module.name)
            )));
        }
        None => return Err(FormatError::Invalid("no entry symbol".into())),
    }
    validate::check(&module)?;
    Ok(module)
}
