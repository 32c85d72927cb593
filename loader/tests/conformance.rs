//! Conformance against the LLVM oracles (code-objects.md §11, §12): for every committed test
//! kernel (tests/kernels/bin), what the loader reads must equal what `llvm-readelf-19 -h -d -s
//! -r --notes` and `llvm-objdump -D -j .rodata` printed for the same file. The oracle outputs are
//! committed under tests/loader-oracle/golden by tests/loader-oracle/generate.sh (CI checks them
//! for drift), so this test needs no LLVM.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use amdgpu_loader::kernel_descriptor::{
    BitField, UserSgpr, kernel_code_property, rsrc1, rsrc2, rsrc3,
};
use amdgpu_loader::metadata::{KernelArg, KernelKind, KernelMetadata};
use amdgpu_loader::symbol::{SHN_ABS, SHN_UNDEF, Symbol};
use amdgpu_loader::{
    CodeObject, CodeObjectVersion, Error, ExternalDefinitions, FatBinary, HiddenArg,
    KernelDescriptor, NoExternals, Processor, TargetId, ValueKind,
};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every committed code object, as (path relative to bin/, bytes, golden readelf, golden kd).
fn corpus() -> Vec<(String, Vec<u8>, String, String)> {
    let bin = repo().join("tests/kernels/bin");
    let golden = repo().join("tests/loader-oracle/golden");
    let mut out = Vec::new();
    let mut targets: Vec<_> = std::fs::read_dir(&bin)
        .unwrap_or_else(|e| panic!("{}: {e} (the test kernels are committed)", bin.display()))
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|t| t != "fixtures" && !t.starts_with('.') && t != "MANIFEST")
        .collect();
    targets.sort();
    for target in targets {
        let mut files: Vec<_> = std::fs::read_dir(bin.join(&target))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|f| is_code_object_name(f))
            .collect();
        files.sort();
        for file in files {
            let rel = format!("{target}/{file}");
            let read = |suffix: &str| {
                std::fs::read_to_string(golden.join(format!("{rel}.{suffix}"))).unwrap_or_else(
                    |e| panic!("golden {rel}.{suffix}: {e}; run tests/loader-oracle/generate.sh"),
                )
            };
            out.push((
                rel.clone(),
                std::fs::read(bin.join(&rel)).unwrap(),
                read("readelf"),
                read("kd"),
            ));
        }
    }
    assert!(out.len() > 300, "only {} code objects found", out.len());
    for target in ["gfx90a", "gfx942", "gfx1100"] {
        assert!(
            out.iter()
                .any(|(rel, ..)| rel.starts_with(&format!("{target}/")))
        );
    }
    out
}

/// `<name>.co4`, `.co5` or `.co6` (bin/ also holds `.dis` disassembly listings).
fn is_code_object_name(file: &str) -> bool {
    file.rsplit_once(".co")
        .is_some_and(|(_, v)| matches!(v, "4" | "5" | "6"))
}

// ---------------------------------------------------------------------------------------------
// llvm-readelf text

/// The lines of the block that follows a header line starting with `header`.
fn block<'a>(text: &'a str, header: &str) -> Option<(&'a str, Vec<&'a str>)> {
    let mut lines = text.lines();
    let head = lines.by_ref().find(|l| l.starts_with(header))?;
    // Blocks end at a blank line, or (llvm-readelf sometimes omits it) at the next heading.
    let body = lines
        .take_while(|l| !l.trim().is_empty() && !l.starts_with(|c: char| c.is_ascii_uppercase()));
    Some((head, body.collect()))
}

fn header_field<'a>(text: &'a str, field: &str) -> &'a str {
    text.lines()
        .find_map(|l| l.trim().strip_prefix(field))
        .unwrap_or_else(|| panic!("no `{field}`"))
        .trim()
}

#[derive(Debug, PartialEq)]
struct GoldenSymbol {
    value: u64,
    size: u64,
    kind: String,
    bind: String,
    vis: String,
    ndx: u16,
    name: String,
}

fn golden_symbols(text: &str, table: &str) -> Option<Vec<GoldenSymbol>> {
    let (head, lines) = block(text, &format!("Symbol table '{table}' contains"))?;
    let count: usize = head.split_whitespace().nth(4).unwrap().parse().unwrap();
    let symbols: Vec<_> = lines
        .iter()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            GoldenSymbol {
                value: u64::from_str_radix(f[1], 16).unwrap(),
                size: f[2].parse().unwrap_or_else(|e| panic!("{l}: {e}")),
                kind: f[3].into(),
                bind: f[4].into(),
                vis: f[5].into(),
                ndx: match f[6] {
                    "UND" => SHN_UNDEF,
                    "ABS" => SHN_ABS,
                    n => n.parse().unwrap(),
                },
                name: f.get(7).copied().unwrap_or("").into(),
            }
        })
        .collect();
    assert_eq!(symbols.len(), count, "{table}");
    Some(symbols)
}

fn mine(s: &Symbol<'_>) -> GoldenSymbol {
    GoldenSymbol {
        value: s.value,
        size: s.size,
        kind: s.kind_name().into(),
        bind: s.binding_name().into(),
        vis: s.visibility_name().into(),
        ndx: s.section,
        name: s.name.into(),
    }
}

#[derive(Debug, PartialEq)]
struct GoldenRelocation {
    offset: u64,
    r_type: u32,
    symbol: u32,
    type_name: String,
    symbol_name: String,
    addend: i64,
}

fn golden_relocations(text: &str) -> Vec<GoldenRelocation> {
    let Some((_, lines)) = block(text, "Relocation section '.rela.dyn'") else {
        return Vec::new();
    };
    lines
        .iter()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let info = u64::from_str_radix(f[1], 16).unwrap();
            let (symbol_name, addend) = if f.len() == 4 {
                (String::new(), i64::from_str_radix(f[3], 16).unwrap())
            } else {
                // value, name, sign, addend
                let magnitude = i64::from_str_radix(f[6], 16).unwrap();
                (
                    f[4].to_owned(),
                    if f[5] == "-" { -magnitude } else { magnitude },
                )
            };
            GoldenRelocation {
                offset: u64::from_str_radix(f[0], 16).unwrap(),
                r_type: info as u32,
                symbol: (info >> 32) as u32,
                type_name: f[2].into(),
                symbol_name,
                addend,
            }
        })
        .collect()
}

fn golden_dynamic(text: &str) -> BTreeMap<String, u64> {
    let Some((_, lines)) = block(text, "Dynamic section at offset") else {
        return BTreeMap::new();
    };
    lines
        .iter()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let tag = f[1].trim_matches(|c| c == '(' || c == ')').to_owned();
            let value = f[2];
            let value = value.strip_prefix("0x").map_or_else(
                || value.parse().unwrap(),
                |h| u64::from_str_radix(h, 16).unwrap(),
            );
            (tag, value)
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// The YAML llvm-readelf prints for the metadata note: block maps, block sequences, scalars.

#[derive(Debug, Clone, PartialEq)]
enum Yaml {
    Scalar(String),
    Seq(Vec<Yaml>),
    Map(BTreeMap<String, Yaml>),
}

impl Yaml {
    fn map(&self) -> &BTreeMap<String, Yaml> {
        match self {
            Yaml::Map(m) => m,
            other => panic!("not a map: {other:?}"),
        }
    }
}

enum Token {
    Dash(usize),
    Line(usize, String),
}

fn unquote(s: &str) -> String {
    if let Some(inner) = s.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')) {
        inner.replace("''", "'")
    } else if let Some(inner) = s.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
        inner.replace("\\\"", "\"").replace("\\\\", "\\")
    } else {
        s.to_owned()
    }
}

fn parse_yaml(text: &str) -> Yaml {
    let mut tokens = Vec::new();
    for line in text.lines() {
        let mut indent = line.len() - line.trim_start().len();
        let mut rest = line.trim_start();
        if rest.is_empty() || rest == "---" || rest == "..." {
            continue;
        }
        while let Some(r) = rest.strip_prefix("- ") {
            tokens.push(Token::Dash(indent));
            indent += 2;
            rest = r;
        }
        tokens.push(Token::Line(indent, rest.to_owned()));
    }
    let mut pos = 0;
    let indent = match &tokens[0] {
        Token::Dash(i) | Token::Line(i, _) => *i,
    };
    let doc = node(&tokens, &mut pos, indent);
    assert_eq!(pos, tokens.len(), "unparsed YAML");
    doc
}

fn node(tokens: &[Token], pos: &mut usize, indent: usize) -> Yaml {
    match &tokens[*pos] {
        Token::Dash(i) if *i == indent => {
            let mut items = Vec::new();
            while let Some(Token::Dash(i)) = tokens.get(*pos) {
                if *i != indent {
                    break;
                }
                *pos += 1;
                items.push(node(tokens, pos, indent + 2));
            }
            Yaml::Seq(items)
        }
        Token::Line(i, content) if *i == indent && key_value(content).is_some() => {
            let mut map = BTreeMap::new();
            while let Some(Token::Line(i, content)) = tokens.get(*pos) {
                if *i != indent {
                    break;
                }
                let Some((key, value)) = key_value(content) else {
                    break;
                };
                *pos += 1;
                let value = if value.is_empty() {
                    let inner = match &tokens[*pos] {
                        Token::Dash(i) | Token::Line(i, _) => *i,
                    };
                    assert!(inner >= indent, "bad YAML nesting at {key}");
                    node(tokens, pos, inner)
                } else {
                    scalar(value)
                };
                map.insert(key.to_owned(), value);
            }
            Yaml::Map(map)
        }
        Token::Line(_, content) => {
            *pos += 1;
            scalar(content)
        }
        Token::Dash(_) => panic!("unexpected sequence item"),
    }
}

fn scalar(text: &str) -> Yaml {
    if text == "[]" {
        Yaml::Seq(Vec::new())
    } else {
        Yaml::Scalar(unquote(text))
    }
}

fn key_value(content: &str) -> Option<(&str, &str)> {
    if content.starts_with('\'') || content.starts_with('"') {
        return None;
    }
    if let Some(key) = content.strip_suffix(':') {
        return Some((key, ""));
    }
    let at = content.find(": ")?;
    Some((&content[..at], content[at + 2..].trim()))
}

fn golden_metadata(text: &str) -> Option<Yaml> {
    let start = text.find("AMDGPU Metadata:")?;
    let rest = &text[start..];
    let begin = rest.find("---")?;
    let end = rest.find("\n...")?;
    Some(parse_yaml(&rest[begin + 3..end]))
}

fn s(v: impl std::fmt::Display) -> Yaml {
    Yaml::Scalar(v.to_string())
}

fn seq<T: std::fmt::Display>(items: &[T]) -> Yaml {
    Yaml::Seq(items.iter().map(s).collect())
}

/// The loader's view of a kernel's metadata, rendered as llvm-readelf prints it.
fn kernel_yaml(k: &KernelMetadata) -> BTreeMap<String, Yaml> {
    let mut m = BTreeMap::new();
    let mut put = |key: &str, value: Yaml| {
        m.insert(key.to_owned(), value);
    };
    put(".name", s(&k.name));
    put(".symbol", s(&k.symbol));
    if let Some(l) = &k.language {
        put(".language", s(l));
    }
    if let Some(v) = &k.language_version {
        put(".language_version", seq(v));
    }
    if !k.args.is_empty() {
        put(".args", Yaml::Seq(k.args.iter().map(arg_yaml).collect()));
    }
    if let Some(v) = k.reqd_workgroup_size {
        put(".reqd_workgroup_size", seq(&v));
    }
    if let Some(v) = k.workgroup_size_hint {
        put(".workgroup_size_hint", seq(&v));
    }
    if let Some(v) = &k.vec_type_hint {
        put(".vec_type_hint", s(v));
    }
    if let Some(v) = &k.device_enqueue_symbol {
        put(".device_enqueue_symbol", s(v));
    }
    put(".kernarg_segment_size", s(k.kernarg_segment_size));
    put(".group_segment_fixed_size", s(k.group_segment_fixed_size));
    put(
        ".private_segment_fixed_size",
        s(k.private_segment_fixed_size),
    );
    put(".kernarg_segment_align", s(k.kernarg_segment_align));
    put(".wavefront_size", s(k.wavefront_size));
    put(".sgpr_count", s(k.sgpr_count));
    put(".vgpr_count", s(k.vgpr_count));
    if let Some(v) = k.agpr_count {
        put(".agpr_count", s(v));
    }
    put(".max_flat_workgroup_size", s(k.max_flat_workgroup_size));
    if let Some(v) = k.sgpr_spill_count {
        put(".sgpr_spill_count", s(v));
    }
    if let Some(v) = k.vgpr_spill_count {
        put(".vgpr_spill_count", s(v));
    }
    if k.kind != KernelKind::Normal {
        put(".kind", s(k.kind.name()));
    }
    for (axis, v) in ["x", "y", "z"].iter().zip(k.max_num_work_groups) {
        if let Some(v) = v {
            put(&format!(".max_num_work_groups_{axis}"), s(v));
        }
    }
    if let Some(v) = k.uses_dynamic_stack {
        put(".uses_dynamic_stack", s(v));
    }
    // LLVM writes these two as integers.
    if let Some(v) = k.workgroup_processor_mode {
        put(".workgroup_processor_mode", s(u8::from(v)));
    }
    if let Some(v) = k.uniform_work_group_size {
        put(".uniform_work_group_size", s(u8::from(v)));
    }
    if let Some(v) = k.cluster_dims {
        put(".cluster_dims", seq(&v));
    }
    m
}

fn arg_yaml(a: &KernelArg) -> Yaml {
    let mut m = BTreeMap::new();
    let mut put = |key: &str, value: Yaml| {
        m.insert(key.to_owned(), value);
    };
    if let Some(v) = &a.name {
        put(".name", s(v));
    }
    if let Some(v) = &a.type_name {
        put(".type_name", s(v));
    }
    put(".offset", s(a.offset));
    put(".size", s(a.size));
    put(".value_kind", s(a.value_kind.name()));
    if let Some(v) = &a.value_type {
        put(".value_type", s(v));
    }
    if let Some(v) = a.pointee_align {
        put(".pointee_align", s(v));
    }
    if let Some(v) = a.address_space {
        put(".address_space", s(v.name()));
    }
    if let Some(v) = a.access {
        put(".access", s(v.name()));
    }
    if let Some(v) = a.actual_access {
        put(".actual_access", s(v.name()));
    }
    for (key, on) in [
        (".is_const", a.is_const),
        (".is_restrict", a.is_restrict),
        (".is_volatile", a.is_volatile),
        (".is_pipe", a.is_pipe),
    ] {
        if on {
            put(key, s(true));
        }
    }
    Yaml::Map(m)
}

// ---------------------------------------------------------------------------------------------
// llvm-objdump's .amdhsa_* directives

fn golden_descriptors(text: &str) -> BTreeMap<String, Result<BTreeMap<String, u64>, String>> {
    let mut out = BTreeMap::new();
    let mut current: Option<(String, BTreeMap<String, u64>)> = None;
    for line in text.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("; error decoding ") {
            let (symbol, why) = rest.split_once(':').unwrap();
            out.insert(symbol.to_owned(), Err(why.trim().to_owned()));
        } else if let Some(name) = line.strip_prefix(".amdhsa_kernel ") {
            current = Some((format!("{name}.kd"), BTreeMap::new()));
        } else if line == ".end_amdhsa_kernel" {
            let (symbol, fields) = current.take().unwrap();
            out.insert(symbol, Ok(fields));
        } else if let (Some((_, fields)), Some(rest)) =
            (current.as_mut(), line.strip_prefix(".amdhsa_"))
        {
            let (name, value) = rest.split_once(char::is_whitespace).unwrap();
            fields.insert(name.to_owned(), value.trim().parse().unwrap());
        }
    }
    out
}

/// The loader's decode of one `.amdhsa_*` directive, through the named fields of
/// `kernel_descriptor` (so that their positions are what objdump reads); `None` for directives
/// that the descriptor does not determine (`reserve_*`: objdump always prints 0 for them).
fn directive(kd: &KernelDescriptor, processor: &Processor, name: &str) -> Option<u64> {
    use kernel_code_property as p;
    let kcp = u32::from(kd.kernel_code_properties);
    let (r1, r2, r3) = (
        kd.compute_pgm_rsrc1,
        kd.compute_pgm_rsrc2,
        kd.compute_pgm_rsrc3,
    );
    let get = |field: BitField, word: u32| u64::from(field.get(word));
    Some(match name {
        "group_segment_fixed_size" => u64::from(kd.group_segment_fixed_size),
        "private_segment_fixed_size" => u64::from(kd.private_segment_fixed_size),
        "kernarg_size" => u64::from(kd.kernarg_size),
        "accum_offset" => u64::from((kd.accum_offset() + 1) * 4),
        "tg_split" => get(rsrc3::GFX90A_TG_SPLIT, r3),
        "inst_pref_size" if processor.version.0 >= 12 => get(rsrc3::GFX12_PLUS_INST_PREF_SIZE, r3),
        "inst_pref_size" => get(rsrc3::GFX11_INST_PREF_SIZE, r3),
        "shared_vgpr_count" => get(rsrc3::GFX10_GFX11_SHARED_VGPR_COUNT, r3),
        "next_free_vgpr" => u64::from(kd.allocated_vgprs(processor)),
        "next_free_sgpr" => u64::from((kd.granulated_sgpr_count() + 1) * 8),
        "reserve_vcc" | "reserve_flat_scratch" | "reserve_xnack_mask" => return None,
        "float_round_mode_32" => get(rsrc1::FLOAT_ROUND_MODE_32, r1),
        "float_round_mode_16_64" => get(rsrc1::FLOAT_ROUND_MODE_16_64, r1),
        "float_denorm_mode_32" => get(rsrc1::FLOAT_DENORM_MODE_32, r1),
        "float_denorm_mode_16_64" => get(rsrc1::FLOAT_DENORM_MODE_16_64, r1),
        "dx10_clamp" => get(rsrc1::GFX6_GFX11_ENABLE_DX10_CLAMP, r1),
        "round_robin_scheduling" => get(rsrc1::GFX12_PLUS_ENABLE_WG_RR_EN, r1),
        "ieee_mode" => get(rsrc1::GFX6_GFX11_ENABLE_IEEE_MODE, r1),
        "fp16_overflow" => get(rsrc1::GFX9_PLUS_FP16_OVFL, r1),
        "workgroup_processor_mode" => get(rsrc1::GFX10_PLUS_WGP_MODE, r1),
        "memory_ordered" => get(rsrc1::GFX10_PLUS_MEM_ORDERED, r1),
        "forward_progress" => get(rsrc1::GFX10_PLUS_FWD_PROGRESS, r1),
        "system_sgpr_private_segment_wavefront_offset" | "enable_private_segment" => {
            get(rsrc2::ENABLE_PRIVATE_SEGMENT, r2)
        }
        "user_sgpr_count" => u64::from(kd.user_sgpr_count()),
        "system_sgpr_workgroup_id_x" => get(rsrc2::ENABLE_SGPR_WORKGROUP_ID_X, r2),
        "system_sgpr_workgroup_id_y" => get(rsrc2::ENABLE_SGPR_WORKGROUP_ID_Y, r2),
        "system_sgpr_workgroup_id_z" => get(rsrc2::ENABLE_SGPR_WORKGROUP_ID_Z, r2),
        "system_sgpr_workgroup_info" => get(rsrc2::ENABLE_SGPR_WORKGROUP_INFO, r2),
        "system_vgpr_workitem_id" => get(rsrc2::ENABLE_VGPR_WORKITEM_ID, r2),
        "exception_fp_ieee_invalid_op" => {
            get(rsrc2::ENABLE_EXCEPTION_IEEE_754_FP_INVALID_OPERATION, r2)
        }
        "exception_fp_denorm_src" => get(rsrc2::ENABLE_EXCEPTION_FP_DENORMAL_SOURCE, r2),
        "exception_fp_ieee_div_zero" => {
            get(rsrc2::ENABLE_EXCEPTION_IEEE_754_FP_DIVISION_BY_ZERO, r2)
        }
        "exception_fp_ieee_overflow" => get(rsrc2::ENABLE_EXCEPTION_IEEE_754_FP_OVERFLOW, r2),
        "exception_fp_ieee_underflow" => get(rsrc2::ENABLE_EXCEPTION_IEEE_754_FP_UNDERFLOW, r2),
        "exception_fp_ieee_inexact" => get(rsrc2::ENABLE_EXCEPTION_IEEE_754_FP_INEXACT, r2),
        "exception_int_div_zero" => get(rsrc2::ENABLE_EXCEPTION_INT_DIVIDE_BY_ZERO, r2),
        "user_sgpr_private_segment_buffer" => get(p::ENABLE_SGPR_PRIVATE_SEGMENT_BUFFER, kcp),
        "user_sgpr_dispatch_ptr" => get(p::ENABLE_SGPR_DISPATCH_PTR, kcp),
        "user_sgpr_queue_ptr" => get(p::ENABLE_SGPR_QUEUE_PTR, kcp),
        "user_sgpr_kernarg_segment_ptr" => get(p::ENABLE_SGPR_KERNARG_SEGMENT_PTR, kcp),
        "user_sgpr_dispatch_id" => get(p::ENABLE_SGPR_DISPATCH_ID, kcp),
        "user_sgpr_flat_scratch_init" => get(p::ENABLE_SGPR_FLAT_SCRATCH_INIT, kcp),
        "user_sgpr_private_segment_size" => get(p::ENABLE_SGPR_PRIVATE_SEGMENT_SIZE, kcp),
        "user_sgpr_kernarg_preload_length" => u64::from(kd.kernarg_preload_length()),
        "user_sgpr_kernarg_preload_offset" => u64::from(kd.kernarg_preload_offset()),
        "wavefront_size32" => u64::from(kd.wavefront_size() == 32),
        "uses_dynamic_stack" => u64::from(kd.uses_dynamic_stack()),
        other => panic!("directive .amdhsa_{other} is not decoded by the test: add it"),
    })
}

// ---------------------------------------------------------------------------------------------

#[test]
fn headers_symbols_and_dynamic_sections_match_readelf() {
    for (rel, bytes, readelf, _) in corpus() {
        let co = CodeObject::parse(&bytes).unwrap_or_else(|e| panic!("{rel}: {e}"));
        // e_flags and the ABI version.
        let flags = header_field(&readelf, "Flags:");
        let flags = u32::from_str_radix(
            flags.split(',').next().unwrap().trim_start_matches("0x"),
            16,
        )
        .unwrap();
        assert_eq!(co.target().e_flags(), flags, "{rel}");
        let target = rel.split('/').next().unwrap();
        assert_eq!(co.target().processor.name, target, "{rel}");
        let abi: u8 = header_field(&readelf, "ABI Version:").parse().unwrap();
        assert_eq!(co.version().abi_version(), abi, "{rel}");
        let expected_version = match rel.rsplit_once(".co").unwrap().1 {
            "4" => CodeObjectVersion::V4,
            "5" => CodeObjectVersion::V5,
            _ => CodeObjectVersion::V6,
        };
        assert_eq!(co.version(), expected_version, "{rel}");

        // Symbols, entry 0 included, in order.
        let dynsym = golden_symbols(&readelf, ".dynsym").unwrap_or_default();
        let mine_dyn: Vec<_> = co.dynamic_symbols().iter().map(mine).collect();
        assert_eq!(mine_dyn, dynsym, "{rel}: .dynsym");
        let symtab = golden_symbols(&readelf, ".symtab").unwrap_or_default();
        let mine_static: Vec<_> = co.static_symbols().iter().map(mine).collect();
        assert_eq!(mine_static, symtab, "{rel}: .symtab");

        // The dynamic section.
        let dynamic = golden_dynamic(&readelf);
        let d = co.dynamic().unwrap();
        assert_eq!(d.rela, dynamic.get("RELA").copied(), "{rel}");
        assert_eq!(
            d.relasz,
            dynamic.get("RELASZ").copied().unwrap_or(0),
            "{rel}"
        );
        assert_eq!(d.symtab, dynamic.get("SYMTAB").copied(), "{rel}");
        assert_eq!(d.strtab, dynamic.get("STRTAB").copied(), "{rel}");
        assert_eq!(d.strsz, dynamic.get("STRSZ").copied(), "{rel}");
        assert_eq!(d.hash, dynamic.get("HASH").copied(), "{rel}");
        assert_eq!(d.gnu_hash, dynamic.get("GNU_HASH").copied(), "{rel}");
        assert_eq!(d.relacount, dynamic.get("RELACOUNT").copied(), "{rel}");

        // Hash lookups agree with a linear scan (code-objects.md §11, Symbols): DT_HASH finds
        // every .dynsym entry, DT_GNU_HASH every defined one (it leaves undefined symbols out).
        let (sysv, gnu) = co.hash_tables();
        assert!(sysv || gnu, "{rel}: no symbol hash table");
        for (index, sym) in co.dynamic_symbols().iter().enumerate().skip(1) {
            if sysv {
                assert_eq!(
                    co.sysv_hash_lookup(sym.name).unwrap(),
                    Some(index as u32),
                    "{rel}: DT_HASH lookup of {}",
                    sym.name
                );
            }
            if sym.is_defined() || !gnu {
                let found = co.hash_lookup(sym.name).unwrap();
                assert_eq!(found, Some(sym), "{rel}: hash lookup of {}", sym.name);
            }
        }
        assert_eq!(co.hash_lookup("aq_no_such_symbol").unwrap(), None);
        assert_eq!(co.sysv_hash_lookup("aq_no_such_symbol").unwrap(), None);
    }
}

#[test]
fn relocations_match_readelf_and_apply_at_any_base() {
    let mut relative = 0;
    let mut absolute = 0;
    for (rel, bytes, readelf, _) in corpus() {
        let co = CodeObject::parse(&bytes).unwrap();
        let golden = golden_relocations(&readelf);
        let mine = co.relocations().relocations();
        assert_eq!(mine.len(), golden.len(), "{rel}");
        for (m, g) in mine.iter().zip(&golden) {
            assert_eq!(m.offset, g.offset, "{rel}");
            assert_eq!(m.kind.r_type(), g.r_type, "{rel}");
            assert_eq!(m.kind.name(), g.type_name, "{rel}");
            assert_eq!(m.symbol, g.symbol, "{rel}");
            assert_eq!(
                co.dynamic_symbols()[m.symbol as usize].name,
                g.symbol_name,
                "{rel}"
            );
            assert_eq!(m.addend, g.addend, "{rel}");
        }
        // Apply at two bases: each RELATIVE64 place holds base + addend; each ABS64 against an
        // external holds its definition + addend.
        let externals: Vec<String> = co
            .relocations()
            .externals()
            .iter()
            .map(|e| e.name.clone())
            .collect();
        if !externals.is_empty() {
            let mut dest = vec![0; co.image_size() as usize];
            assert!(
                matches!(
                    co.load(&mut dest, 0x10_0000_0000, &NoExternals),
                    Err(Error::UndefinedSymbol { .. })
                ),
                "{rel}: loaded without its externals"
            );
        }
        let mut ext = ExternalDefinitions::new();
        for (i, name) in externals.iter().enumerate() {
            ext.define(name, 0xdead_0000 + 0x100 * i as u64).unwrap();
        }
        for base in [0x10_0000_0000u64, 0x7fff_f000_0000] {
            let mut dest = vec![0xa5; co.image_size() as usize];
            let image = co.load(&mut dest, base, &ext).unwrap();
            for g in &golden {
                let at = (g.offset - co.layout().start_vaddr) as usize;
                let value = u64::from_le_bytes(dest[at..at + 8].try_into().unwrap());
                match g.type_name.as_str() {
                    "R_AMDGPU_RELATIVE64" => {
                        relative += 1;
                        assert_eq!(value, image.delta().wrapping_add(g.addend as u64), "{rel}");
                    }
                    "R_AMDGPU_ABS64" => {
                        absolute += 1;
                        let s = ext.get(&g.symbol_name).unwrap_or_else(|| {
                            image.delta() + co.dynamic_symbols()[g.symbol as usize].value
                        });
                        assert_eq!(value, s.wrapping_add(g.addend as u64), "{rel}");
                    }
                    other => panic!("{rel}: {other} in a committed object"),
                }
            }
            // Everything else is the file's bytes or zero.
            for s in co.segments() {
                let at = (s.vaddr - co.layout().start_vaddr) as usize;
                let file = &bytes[s.file_offset as usize..(s.file_offset + s.file_size) as usize];
                for (i, (&placed, &original)) in dest[at..].iter().zip(file).enumerate() {
                    let vaddr = s.vaddr + i as u64;
                    if !golden
                        .iter()
                        .any(|g| (g.offset..g.offset + 8).contains(&vaddr))
                    {
                        assert_eq!(placed, original, "{rel} at {vaddr:#x}");
                    }
                }
                let bss = at + s.file_size as usize..at + s.mem_size as usize;
                assert!(dest[bss].iter().all(|&b| b == 0), "{rel}: bss not zeroed");
            }
            // The gaps between segments are zero too (the destination started as 0xa5).
            let mut covered = vec![false; dest.len()];
            for s in co.segments() {
                let at = (s.vaddr - co.layout().start_vaddr) as usize;
                covered[at..at + s.mem_size as usize].fill(true);
            }
            assert!(
                dest.iter().zip(&covered).all(|(&b, &c)| c || b == 0),
                "{rel}: a gap between segments is not zeroed"
            );
        }
    }
    assert!(
        relative > 100 && absolute > 10,
        "{relative} RELATIVE64, {absolute} ABS64 checked"
    );
}

#[test]
fn metadata_matches_readelf_key_for_key() {
    let mut kernels = 0;
    for (rel, bytes, readelf, _) in corpus() {
        let co = CodeObject::parse(&bytes).unwrap();
        let Some(golden) = golden_metadata(&readelf) else {
            assert!(co.metadata().is_none(), "{rel}");
            continue;
        };
        let golden = golden.map();
        let meta = co.metadata().unwrap();
        let (major, minor) = meta.version.unwrap();
        assert_eq!(golden["amdhsa.version"], seq(&[major, minor]), "{rel}");
        assert_eq!(
            golden.get("amdhsa.target").cloned(),
            meta.target.as_ref().map(s),
            "{rel}"
        );
        assert_eq!(
            golden
                .get("amdhsa.printf")
                .cloned()
                .unwrap_or(Yaml::Seq(vec![])),
            seq(&meta.printf),
            "{rel}"
        );
        for key in golden.keys() {
            assert!(
                [
                    "amdhsa.version",
                    "amdhsa.target",
                    "amdhsa.printf",
                    "amdhsa.kernels"
                ]
                .contains(&key.as_str()),
                "{rel}: top-level key {key} not read"
            );
        }
        let Yaml::Seq(golden_kernels) = &golden["amdhsa.kernels"] else {
            panic!("{rel}: amdhsa.kernels");
        };
        assert_eq!(golden_kernels.len(), co.kernels().len(), "{rel}");
        for gk in golden_kernels {
            let gk = gk.map();
            let Yaml::Scalar(symbol) = &gk[".symbol"] else {
                panic!()
            };
            let kernel = co
                .kernel(symbol)
                .unwrap_or_else(|| panic!("{rel}: {symbol}"));
            let m = kernel.metadata.as_ref().unwrap();
            let ours = kernel_yaml(m);
            // `.args: []` and no `.args` mean the same.
            let mut gk = gk.clone();
            if gk.get(".args") == Some(&Yaml::Seq(Vec::new())) {
                gk.remove(".args");
            }
            for (key, value) in &gk {
                assert_eq!(ours.get(key), Some(value), "{rel}: {symbol} key {key}");
            }
            assert_eq!(
                ours.len(),
                gk.len(),
                "{rel}: {symbol}: keys {:?} vs {:?}",
                ours.keys(),
                gk.keys()
            );
            kernels += 1;

            // The descriptor agrees with the metadata.
            let kd = &kernel.descriptor;
            assert_eq!(kd.kernarg_size, m.kernarg_segment_size, "{rel}");
            assert_eq!(
                kd.group_segment_fixed_size, m.group_segment_fixed_size,
                "{rel}"
            );
            assert_eq!(
                kd.private_segment_fixed_size, m.private_segment_fixed_size,
                "{rel}"
            );
            assert_eq!(kd.wavefront_size(), m.wavefront_size, "{rel}");
            assert_eq!(
                kd.uses_dynamic_stack(),
                m.uses_dynamic_stack.unwrap_or(false),
                "{rel}"
            );
            implicit_layout_is_sound(&rel, co.version(), kernel.implicit_args, m);
        }
    }
    assert!(kernels > 400, "{kernels} kernels compared");
}

fn implicit_layout_is_sound(
    rel: &str,
    version: CodeObjectVersion,
    implicit: Option<amdgpu_loader::ImplicitArgs>,
    m: &KernelMetadata,
) {
    let hidden: Vec<_> = m.args.iter().filter(|a| a.value_kind.is_hidden()).collect();
    let Some(implicit) = implicit else {
        assert!(hidden.is_empty(), "{rel}: hidden args without a block");
        return;
    };
    let explicit_end = m
        .args
        .iter()
        .filter(|a| !a.value_kind.is_hidden())
        .map(KernelArg::end)
        .max()
        .unwrap_or(0);
    assert!(u64::from(implicit.offset) >= explicit_end, "{rel}");
    assert_eq!(implicit.offset % 8, 0, "{rel}");
    for a in hidden {
        let ValueKind::Hidden(kind) = a.value_kind else {
            unreachable!()
        };
        if let Some(offset) = implicit.offset_of(kind) {
            assert_eq!(offset, a.offset, "{rel}: {}", kind.name());
        }
    }
    match version {
        // The 256-byte block is always counted in the kernarg segment (README of tests/kernels).
        CodeObjectVersion::V5 | CodeObjectVersion::V6 => {
            assert_eq!(implicit.size, 256, "{rel}");
            assert_eq!(implicit.offset + 256, m.kernarg_segment_size, "{rel}");
            for kind in [
                HiddenArg::BlockCountX,
                HiddenArg::GroupSizeX,
                HiddenArg::RemainderX,
                HiddenArg::GridDims,
            ] {
                assert!(implicit.offset_of(kind).is_some());
            }
        }
        // V4: global offsets first (code-objects.md §7.2).
        CodeObjectVersion::V4 => {
            assert_eq!(
                implicit.offset_of(HiddenArg::GlobalOffsetX),
                Some(implicit.offset),
                "{rel}"
            );
        }
    }
}

#[test]
fn kernel_descriptors_match_objdump() {
    let mut decoded = 0;
    let mut undecodable = 0;
    for (rel, bytes, readelf, kd_text) in corpus() {
        let co = CodeObject::parse(&bytes).unwrap();
        let golden = golden_descriptors(&kd_text);
        // Every .kd symbol, and only those, is a kernel.
        let kd_symbols: Vec<_> = golden_symbols(&readelf, ".dynsym")
            .unwrap()
            .into_iter()
            .filter(|s| s.name.strip_suffix(".kd").is_some())
            .collect();
        assert_eq!(kd_symbols.len(), co.kernels().len(), "{rel}");
        assert_eq!(golden.len(), co.kernels().len(), "{rel}");
        let processor = co.target().processor;
        for k in co.kernels() {
            let sym = kd_symbols
                .iter()
                .find(|s| s.name == k.descriptor_symbol)
                .unwrap();
            assert_eq!(
                (sym.value, sym.size, sym.kind.as_str()),
                (k.descriptor_vaddr, 64, "OBJECT"),
                "{rel}"
            );
            assert_eq!(k.descriptor_vaddr % 64, 0, "{rel}");
            assert_eq!(k.entry_vaddr % 256, 0, "{rel}");
            // The entry is the kernel's FUNC symbol.
            let entry = co
                .dynamic_symbols()
                .iter()
                .find(|s| s.name == k.name)
                .unwrap();
            assert_eq!(
                (entry.value, entry.kind_name()),
                (k.entry_vaddr, "FUNC"),
                "{rel}"
            );
            // USER_SGPR_COUNT covers every user SGPR the properties enable (it may be padded).
            assert!(
                k.descriptor.enabled_user_sgpr_count() <= k.descriptor.user_sgpr_count(),
                "{rel}: {} user SGPRs enabled, USER_SGPR_COUNT {}",
                k.descriptor.enabled_user_sgpr_count(),
                k.descriptor.user_sgpr_count()
            );
            match &golden[&k.descriptor_symbol] {
                Ok(fields) => {
                    decoded += 1;
                    for (name, value) in fields {
                        if let Some(ours) = directive(&k.descriptor, processor, name) {
                            assert_eq!(
                                ours, *value,
                                "{rel}: {} .amdhsa_{name}",
                                k.descriptor_symbol
                            );
                        }
                    }
                }
                // LLVM 19 sets reserved bits in gfx10+ descriptors, which objdump then refuses to
                // decode (code-objects.md §5.2); the loader reads them anyway.
                Err(why) => {
                    assert!(why.contains("reserved bits"), "{rel}: {why}");
                    undecodable += 1;
                }
            }
        }
    }
    assert!(
        decoded > 300,
        "{decoded} descriptors compared ({undecodable} undecodable)"
    );
}

#[test]
fn preloaded_kernels_have_the_prologue_at_the_first_entry() {
    let bin = repo().join("tests/kernels/bin");
    let mut seen = 0;
    for target in ["gfx90a", "gfx942", "gfx950"] {
        for v in ["co5", "co6"] {
            let Ok(bytes) = std::fs::read(bin.join(format!("{target}/preload.{v}"))) else {
                continue;
            };
            let co = CodeObject::parse(&bytes).unwrap();
            let k = co.kernel("preload").unwrap();
            assert_eq!(k.descriptor.kernarg_preload_length(), 4);
            assert_eq!(k.descriptor.kernarg_preload_offset(), 0);
            let preload = k.preload_entry_vaddr().unwrap();
            assert_eq!(preload, k.entry_vaddr + 256);
            if v == "co5" {
                // LLVM 19: `s_trap 2` (0xbf920002) at the first entry.
                let at = (k.entry_vaddr - co.layout().start_vaddr) as usize;
                let mut image = vec![0; co.image_size() as usize];
                co.load(&mut image, 0x1_0000_0000, &NoExternals).unwrap();
                assert_eq!(image[at..at + 4], 0xbf92_0002u32.to_le_bytes(), "{target}");
            }
            // The user SGPRs: (scratch V# on gfx90a,) kernarg pointer, the 4 preloaded dwords.
            let slots: Vec<_> = k
                .descriptor
                .user_sgprs()
                .map(|s| (s.kind, s.first, s.count))
                .collect();
            let first = if target == "gfx90a" { 6 } else { 2 };
            assert_eq!(
                slots[slots.len() - 2..],
                [
                    (UserSgpr::KernargSegmentPtr, first - 2, 2),
                    (UserSgpr::PreloadedKernargs, first, 4)
                ],
                "{target}"
            );
            assert!(k.descriptor.enabled_user_sgpr_count() <= k.descriptor.user_sgpr_count());
            seen += 1;
        }
    }
    // gfx90a and gfx942 (V5, V6), gfx950 (V6 only: LLVM 19 predates it).
    assert_eq!(seen, 5, "preload objects checked");
}

#[test]
fn fixtures_list_the_bundle_entries_the_bundler_lists() {
    let bin = repo().join("tests/kernels/bin/fixtures");
    let golden = repo().join("tests/loader-oracle/golden/fixtures");
    let vector_add = |t: &str| {
        std::fs::read(repo().join(format!("tests/kernels/bin/{t}/vector_add.co5"))).unwrap()
    };
    let mut files: Vec<_> = std::fs::read_dir(&bin)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(files.len() >= 5);
    for path in files {
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        let bytes = std::fs::read(&path).unwrap();
        let fat = FatBinary::parse(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        let listed = std::fs::read_to_string(golden.join(format!("{name}.bundle"))).unwrap();
        let mut want: Vec<&str> = listed.lines().collect();
        let mut got: Vec<&str> = fat.entries.iter().map(|e| e.id.as_str()).collect();
        want.sort_unstable();
        got.sort_unstable();
        assert_eq!(got, want, "{name}");
        for entry in fat.code_objects() {
            let target = entry.target.unwrap().processor.name;
            assert_eq!(
                entry.bytes.as_ref(),
                vector_add(target),
                "{name}: {}",
                entry.id
            );
            CodeObject::parse(&entry.bytes).unwrap();
        }
        let mi300 = TargetId::for_agent(90402, false, true).unwrap();
        assert_eq!(
            fat.best_for(&mi300).unwrap().id,
            "hipv4-amdgcn-amd-amdhsa--gfx942",
            "{name}"
        );
        let navi = TargetId::for_agent(110000, false, false).unwrap();
        assert!(fat.best_for(&navi).is_none(), "{name}");
    }
}

#[test]
fn symbols_follow_the_export_rules() {
    let bin = repo().join("tests/kernels/bin/gfx90a");
    let load = |name: &str| {
        let bytes = std::fs::read(bin.join(name)).unwrap();
        let co = CodeObject::parse(&bytes).unwrap();
        let mut dest = vec![0; co.image_size() as usize];
        let mut ext = ExternalDefinitions::new();
        for e in co.relocations().externals() {
            ext.define(&e.name, 0x4000_0000).unwrap();
        }
        co.load(&mut dest, 0x2_0000_0000, &ext).unwrap()
    };
    // Exported and local device functions (device_call), function-pointer targets (indirect_call).
    let image = load("device_call.co5");
    assert!(image.function("dc_mix").unwrap().exported);
    assert!(!image.function("dc_window_sum").unwrap().exported);
    assert!(
        image.function("device_call").is_none(),
        "kernel entries are not functions"
    );
    let exports: Vec<_> = image.exports().map(|(n, _)| n.to_owned()).collect();
    assert!(
        exports.contains(&"dc_mix".to_owned()) && !exports.contains(&"dc_window_sum".to_owned())
    );
    assert!(!exports.iter().any(|n| n == "_DYNAMIC"));
    // Variables in .data, .rodata and .bss.
    let image = load("global_read.co5");
    assert!(image.variable("gr_data").unwrap().exported);
    assert!(image.variable("gr_const").unwrap().exported);
    let image = load("bss.co5");
    assert_eq!(image.variable("bss_counters").unwrap().size, 4096);
    // Four kernels, each by both names.
    let image = load("multi_kernel.co5");
    assert_eq!(image.kernels().count(), 4);
    for name in ["mk_fill", "mk_iota", "mk_scale", "mk_vector_add_f32"] {
        let a = image.kernel(name).unwrap();
        let b = image.kernel(&format!("{name}.kd")).unwrap();
        assert_eq!(a, b);
    }
    // clang-22's callable kernel copies are functions, not kernels.
    let bytes = std::fs::read(bin.join("vector_add.co6")).unwrap();
    let co = CodeObject::parse(&bytes).unwrap();
    assert_eq!(co.kernels().len(), 1);
    assert!(
        co.functions()
            .iter()
            .any(|f| f.name == "__clang_ocl_kern_imp_vector_add")
    );
    // Stripped of .symtab (llvm-strip) the exports are unchanged and the locals gone.
    let bytes = std::fs::read(bin.join("device_call.co5")).unwrap();
    let stripped = strip_symtab(&bytes);
    let co = CodeObject::parse(&stripped).unwrap();
    assert!(co.static_symbols().is_empty());
    assert!(co.functions().iter().any(|f| f.name == "dc_mix"));
    assert!(!co.functions().iter().any(|f| f.name == "dc_window_sum"));
    // With no section headers at all (PT_DYNAMIC only), the same kernels and relocations.
    for name in ["global_ptr.co5", "extern_sym.co5", "multi_kernel.co6"] {
        let bytes = std::fs::read(bin.join(name)).unwrap();
        let full = CodeObject::parse(&bytes).unwrap();
        let sectionless = drop_section_headers(&bytes);
        let bare = CodeObject::parse(&sectionless).unwrap();
        assert_eq!(bare.kernels(), full.kernels(), "{name}");
        assert_eq!(
            bare.relocations().relocations(),
            full.relocations().relocations(),
            "{name}"
        );
        assert!(bare.static_symbols().is_empty());
    }
}

/// The object as `llvm-strip` leaves it: `.symtab` turned into a null section.
fn strip_symtab(bytes: &[u8]) -> Vec<u8> {
    let mut b = bytes.to_vec();
    let shoff = u64::from_le_bytes(b[0x28..0x30].try_into().unwrap()) as usize;
    let shnum = u16::from_le_bytes(b[0x3c..0x3e].try_into().unwrap()) as usize;
    for i in 0..shnum {
        let at = shoff + 64 * i;
        if u32::from_le_bytes(b[at + 4..at + 8].try_into().unwrap()) == 2 {
            b[at + 4..at + 64].fill(0);
        }
    }
    b
}

/// The object with `e_shoff`, `e_shnum` and `e_shstrndx` cleared.
fn drop_section_headers(bytes: &[u8]) -> Vec<u8> {
    let mut b = bytes.to_vec();
    b[0x28..0x30].fill(0);
    b[0x3c..0x40].fill(0);
    b
}

/// The user-SGPR layout computed from the descriptor must be what the compiled code uses: in
/// the committed llvm-objdump listings (tests/kernels/bin/<target>/*.dis, gfx90a, gfx942 and
/// gfx1100), the kernarg pointer pair the layout gives is the base of the kernel's scalar
/// loads, and so is
/// the dispatch pointer pair where the kernel reads the packet.
#[test]
fn user_sgpr_layout_matches_the_disassembly() {
    let mut checked = 0;
    let mut dispatch_pointers = 0;
    for (rel, bytes, _, _) in corpus() {
        let Ok(listing) =
            std::fs::read_to_string(repo().join("tests/kernels/bin").join(format!("{rel}.dis")))
        else {
            continue;
        };
        let co = CodeObject::parse(&bytes).unwrap();
        for k in co.kernels() {
            let bases = scalar_load_bases(&listing, &k.name);
            let slot = |kind: UserSgpr| {
                k.descriptor
                    .user_sgprs()
                    .find(|s| s.kind == kind)
                    .map(|s| s.first)
            };
            // Init and fini kernels (LLVM's amdgcn.device.init/fini) never load an argument
            // themselves: they hand the kernarg pointer on to the functions they call.
            let forwards_kernargs = k
                .metadata
                .as_ref()
                .is_some_and(|m| m.kind != KernelKind::Normal);
            if k.kernarg_size() > 0
                && k.descriptor.kernarg_preload_length() == 0
                && !forwards_kernargs
            {
                let first = slot(UserSgpr::KernargSegmentPtr)
                    .unwrap_or_else(|| panic!("{rel}: {} has no kernarg pointer", k.name));
                assert!(
                    bases.contains(&first),
                    "{rel}: {}: kernarg pointer s[{first}:{}] not among load bases {bases:?}",
                    k.name,
                    first + 1
                );
                checked += 1;
            }
            if k.name == "dispatch_ptr" {
                let first = slot(UserSgpr::DispatchPtr)
                    .unwrap_or_else(|| panic!("{rel}: dispatch_ptr has no dispatch pointer"));
                assert!(
                    bases.contains(&first),
                    "{rel}: dispatch pointer s[{first}:{}] not among {bases:?}",
                    first + 1
                );
                dispatch_pointers += 1;
            }
        }
    }
    assert!(checked > 100, "{checked} kernels checked");
    // dispatch_ptr on gfx90a (V4, V5, V6), gfx942 (V5, V6) and gfx1100 (V5, V6, each wave32
    // and wave64), the targets with listings.
    assert_eq!(dispatch_pointers, 9, "dispatch pointers checked");
}

/// The first register of every `s[a:a+1]` base of an `s_load_*` in function `name`'s listing.
fn scalar_load_bases(listing: &str, name: &str) -> Vec<u32> {
    let header = format!("<{name}>:");
    let Some(start) = listing.lines().position(|l| l.ends_with(&header)) else {
        return Vec::new();
    };
    listing
        .lines()
        .skip(start + 1)
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| {
            let l = l.trim_start();
            if !l.starts_with("s_load_") {
                return None;
            }
            let base = l.split(", ").nth(1)?;
            let (lo, hi) = base
                .strip_prefix("s[")?
                .strip_suffix(']')?
                .split_once(':')?;
            let lo: u32 = lo.parse().ok()?;
            (hi.parse::<u32>().ok()? == lo + 1).then_some(lo)
        })
        .collect()
}

/// `ld.lld --emit-relocs` leaves static `.rela.text`, `.rela.rodata`, `.rela.data.rel.ro`
/// sections (`sh_info != 0`) beside `.rela.dyn`: only the dynamic ones are applied, whether the
/// loader finds them through `PT_DYNAMIC` or, without it, through the section headers.
#[test]
fn static_relocation_sections_are_ignored() {
    let dir = repo().join("tests/loader-oracle/golden/built");
    let bytes = std::fs::read(dir.join("global_ptr.emit-relocs.co5")).unwrap();
    let readelf = std::fs::read_to_string(dir.join("global_ptr.emit-relocs.co5.readelf")).unwrap();
    assert!(readelf.contains("Relocation section '.rela.text'"));
    let golden = golden_relocations(&readelf);
    assert_eq!(golden.len(), 8);
    let co = CodeObject::parse(&bytes).unwrap();
    let offsets = |co: &CodeObject<'_>| -> Vec<u64> {
        co.relocations()
            .relocations()
            .iter()
            .map(|r| r.offset)
            .collect()
    };
    assert_eq!(
        offsets(&co),
        golden.iter().map(|g| g.offset).collect::<Vec<_>>()
    );
    // Without PT_DYNAMIC (its program header turned into PT_NULL).
    let mut patched = bytes.clone();
    let phoff = u64::from_le_bytes(patched[0x20..0x28].try_into().unwrap()) as usize;
    let phnum = u16::from_le_bytes(patched[0x38..0x3a].try_into().unwrap()) as usize;
    for i in 0..phnum {
        let at = phoff + 56 * i;
        if u32::from_le_bytes(patched[at..at + 4].try_into().unwrap()) == 2 {
            patched[at..at + 4].fill(0);
        }
    }
    let bare = CodeObject::parse(&patched).unwrap();
    assert!(bare.dynamic().is_none());
    assert_eq!(offsets(&bare), offsets(&co));
}
