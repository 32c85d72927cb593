//! `aqueduct inspect FILE [--json]`: what the loader reads in a code object, an offload bundle
//! (plain or compressed) or a host ELF with a `.hip_fatbin` section. Every code object is fully
//! validated; one that fails is reported with its error and makes the command fail. The JSON
//! schema is documented in README.md ("`aqueduct inspect --json`").

use std::fmt::Write as _;
use std::path::Path;

use amdgpu_loader::bundle::Container;
use amdgpu_loader::metadata::{Access, AddressSpace, KernelMetadata};
use amdgpu_loader::target::FeatureSetting;
use amdgpu_loader::{BundleEntry, CodeObject, FatBinary, ImplicitLayout, KernelSymbol};
use serde_json::{Value, json};

type Error = Box<dyn std::error::Error>;

/// The schema version of the JSON output.
const SCHEMA: u32 = 1;

pub fn run(path: &Path, as_json: bool) -> Result<(), Error> {
    let data = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let fat = FatBinary::parse(&data).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut failed = 0usize;
    let entries: Vec<(&BundleEntry<'_>, Option<Result<CodeObject<'_>, String>>)> = fat
        .entries
        .iter()
        .map(|entry| {
            let parsed = entry
                .is_code_object()
                .then(|| CodeObject::parse(&entry.bytes).map_err(|e| e.to_string()));
            if matches!(parsed, Some(Err(_))) {
                failed += 1;
            }
            (entry, parsed)
        })
        .collect();
    if as_json {
        let doc = json!({
            "schema": SCHEMA,
            "file": path.display().to_string(),
            "container": container_name(fat.container),
            "entries": entries.iter().map(|(entry, parsed)| entry_json(entry, parsed.as_ref())).collect::<Vec<_>>(),
        });
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        let mut out = String::new();
        writeln!(
            out,
            "{}: {}, {} entr{}",
            path.display(),
            container_name(fat.container).replace('_', " "),
            entries.len(),
            if entries.len() == 1 { "y" } else { "ies" }
        )?;
        for (entry, parsed) in &entries {
            entry_text(&mut out, entry, parsed.as_ref())?;
        }
        print!("{out}");
    }
    if failed > 0 {
        return Err(format!("{failed} code object(s) failed validation").into());
    }
    Ok(())
}

fn container_name(container: Container) -> &'static str {
    match container {
        Container::CodeObject => "code_object",
        Container::Bundle => "offload_bundle",
        Container::CompressedBundle => "compressed_offload_bundle",
        Container::HostElf => "host_elf",
    }
}

fn feature_name(setting: FeatureSetting) -> &'static str {
    match setting {
        FeatureSetting::Unsupported => "unsupported",
        FeatureSetting::Any => "any",
        FeatureSetting::Off => "off",
        FeatureSetting::On => "on",
    }
}

fn entry_json(entry: &BundleEntry<'_>, parsed: Option<&Result<CodeObject<'_>, String>>) -> Value {
    let (code_object, error) = match parsed {
        None => (Value::Null, Value::Null),
        Some(Ok(co)) => (code_object_json(co), Value::Null),
        Some(Err(e)) => (Value::Null, Value::String(e.clone())),
    };
    json!({
        "id": entry.id,
        "bundle": entry.bundle,
        "size": entry.bytes.len(),
        "code_object": code_object,
        "error": error,
    })
}

fn code_object_json(co: &CodeObject<'_>) -> Value {
    let target = co.target();
    let metadata = co.metadata();
    json!({
        "target": target.to_string(),
        "processor": target.processor.name,
        "xnack": feature_name(target.xnack),
        "sramecc": feature_name(target.sramecc),
        "generic_version": target.generic_version,
        "code_object_version": co.version().number(),
        "abi_version": co.version().abi_version(),
        "metadata_version": metadata.and_then(|m| m.version).map(|(a, b)| vec![a, b]),
        "image_size": co.image_size(),
        "image_align": co.image_align(),
        "start_vaddr": co.layout().start_vaddr,
        "kernels": co.kernels().iter().map(kernel_json).collect::<Vec<_>>(),
        "variables": co.variables().iter().map(|v| json!({
            "name": v.name, "vaddr": v.vaddr, "size": v.size, "exported": v.exported,
        })).collect::<Vec<_>>(),
        "functions": co.functions().iter().map(|f| json!({
            "name": f.name, "vaddr": f.vaddr, "size": f.size, "exported": f.exported,
        })).collect::<Vec<_>>(),
        "relocations": co.relocations().relocations().len(),
        "undefined_symbols": co.relocations().externals().iter().map(|e| e.name.as_str()).collect::<Vec<_>>(),
    })
}

fn kernel_json(k: &KernelSymbol) -> Value {
    let m: Option<&KernelMetadata> = k.metadata.as_ref();
    json!({
        "name": k.name,
        "source_name": k.source_name(),
        "descriptor_symbol": k.descriptor_symbol,
        "descriptor_vaddr": k.descriptor_vaddr,
        "entry_vaddr": k.entry_vaddr,
        "preload_entry_vaddr": k.preload_entry_vaddr(),
        "kernarg_size": k.kernarg_size(),
        "kernarg_align": k.kernarg_align(),
        "group_segment_size": k.descriptor.group_segment_fixed_size,
        "private_segment_size": k.descriptor.private_segment_fixed_size,
        "wavefront_size": k.descriptor.wavefront_size(),
        "uses_dynamic_stack": k.descriptor.uses_dynamic_stack(),
        "kernarg_preload_dwords": k.descriptor.kernarg_preload_length(),
        "sgpr_count": m.map(|m| m.sgpr_count),
        "vgpr_count": m.map(|m| m.vgpr_count),
        "agpr_count": m.and_then(|m| m.agpr_count),
        "max_flat_workgroup_size": m.map(|m| m.max_flat_workgroup_size),
        "kind": m.map(|m| m.kind.name()),
        "implicit_args": k.implicit_args.map(|i| json!({
            "layout": match i.layout { ImplicitLayout::V4 => "v4", ImplicitLayout::V5 => "v5" },
            "offset": i.offset,
            "size": i.size,
        })),
        "args": k.args().iter().map(|a| json!({
            "name": a.name,
            "type_name": a.type_name,
            "offset": a.offset,
            "size": a.size,
            "value_kind": a.value_kind.name(),
            "hidden": a.value_kind.is_hidden(),
            "address_space": a.address_space.map(AddressSpace::name),
            "access": a.access.map(Access::name),
        })).collect::<Vec<_>>(),
    })
}

fn entry_text(
    out: &mut String,
    entry: &BundleEntry<'_>,
    parsed: Option<&Result<CodeObject<'_>, String>>,
) -> std::fmt::Result {
    if entry.kind.is_empty() {
        writeln!(out, "\n[ELF code object] {} bytes", entry.bytes.len())?;
    } else {
        writeln!(
            out,
            "\n[bundle {}] {}: {} bytes",
            entry.bundle,
            entry.id,
            entry.bytes.len()
        )?;
    }
    let co = match parsed {
        None => return writeln!(out, "  (not an AMDGPU code object)"),
        Some(Err(e)) => return writeln!(out, "  INVALID: {e}"),
        Some(Ok(co)) => co,
    };
    let t = co.target();
    writeln!(
        out,
        "  target {t} (xnack {}, sramecc {}{}), code object V{} (EI_ABIVERSION {})",
        feature_name(t.xnack),
        feature_name(t.sramecc),
        if t.generic_version != 0 {
            format!(", generic version {}", t.generic_version)
        } else {
            String::new()
        },
        co.version().number(),
        co.version().abi_version(),
    )?;
    writeln!(
        out,
        "  image {:#x} bytes, align {:#x}; {} relocations{}",
        co.image_size(),
        co.image_align(),
        co.relocations().relocations().len(),
        undefined_text(co),
    )?;
    writeln!(out, "  kernels ({}):", co.kernels().len())?;
    for k in co.kernels() {
        kernel_text(out, k)?;
    }
    writeln!(out, "  variables ({}):", co.variables().len())?;
    for v in co.variables() {
        writeln!(
            out,
            "    {:<32} vaddr {:#08x} size {:<6} {}",
            v.name,
            v.vaddr,
            v.size,
            if v.exported { "exported" } else { "local" }
        )?;
    }
    writeln!(out, "  functions ({}):", co.functions().len())?;
    for f in co.functions() {
        writeln!(
            out,
            "    {:<32} vaddr {:#08x} size {:<6} {}",
            f.name,
            f.vaddr,
            f.size,
            if f.exported { "exported" } else { "local" }
        )?;
    }
    Ok(())
}

fn undefined_text(co: &CodeObject<'_>) -> String {
    let names: Vec<&str> = co
        .relocations()
        .externals()
        .iter()
        .map(|e| e.name.as_str())
        .collect();
    if names.is_empty() {
        String::new()
    } else {
        format!("; undefined: {}", names.join(", "))
    }
}

fn kernel_text(out: &mut String, k: &KernelSymbol) -> std::fmt::Result {
    let kd = &k.descriptor;
    writeln!(
        out,
        "    {} ({} at {:#x}, entry {:#x}{})",
        k.source_name(),
        k.descriptor_symbol,
        k.descriptor_vaddr,
        k.entry_vaddr,
        k.preload_entry_vaddr()
            .map(|p| format!(", preload entry {p:#x}"))
            .unwrap_or_default()
    )?;
    let regs = k.metadata.as_ref().map_or_else(String::new, |m| {
        format!(
            ", sgpr {} vgpr {}{}",
            m.sgpr_count,
            m.vgpr_count,
            m.agpr_count
                .map(|a| format!(" agpr {a}"))
                .unwrap_or_default()
        )
    });
    writeln!(
        out,
        "      kernarg {} (align {}), lds {}, scratch {}{}, wave{}{}",
        k.kernarg_size(),
        k.kernarg_align(),
        kd.group_segment_fixed_size,
        kd.private_segment_fixed_size,
        if kd.uses_dynamic_stack() {
            " + dynamic stack"
        } else {
            ""
        },
        kd.wavefront_size(),
        regs
    )?;
    for (i, a) in k.args().iter().enumerate() {
        writeln!(
            out,
            "      arg {i:<2} +{:<4} {:<3} {:<26} {}",
            a.offset,
            a.size,
            a.value_kind.name(),
            a.name.as_deref().or(a.type_name.as_deref()).unwrap_or("")
        )?;
    }
    Ok(())
}
