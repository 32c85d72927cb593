//! The structs this library shares with its clients, against ROCr's headers: a C probe built
//! with the system compiler prints their sizes and offsets, compared with the Rust layouts.

mod support;

use std::mem::{offset_of, size_of};
use std::process::Command;
use std::time::Duration;

use test_support::process;

/// How long compiling or running the probe may take.
const LIMIT: Duration = Duration::from_secs(120);

use hsa_runtime64::api::memory::PointerInfo;
use hsa_runtime64::api::profiling::Times;
use hsa_runtime64::objects::system_events::Event;

const PROBE: &str = r#"
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <stddef.h>
#include <stdio.h>
#define P(name, value) printf("%s %zu\n", name, (size_t)(value))
int main(void) {
    P("event.size", sizeof(hsa_amd_event_t));
    P("event.event_type", offsetof(hsa_amd_event_t, event_type));
    P("event.agent", offsetof(hsa_amd_event_t, memory_fault.agent));
    P("event.virtual_address", offsetof(hsa_amd_event_t, memory_fault.virtual_address));
    P("event.fault_reason_mask", offsetof(hsa_amd_event_t, memory_fault.fault_reason_mask));
    P("pointer_info.size", sizeof(hsa_amd_pointer_info_t));
    P("pointer_info.kind", offsetof(hsa_amd_pointer_info_t, type));
    P("pointer_info.agent_base_address", offsetof(hsa_amd_pointer_info_t, agentBaseAddress));
    P("pointer_info.host_base_address", offsetof(hsa_amd_pointer_info_t, hostBaseAddress));
    P("pointer_info.size_in_bytes", offsetof(hsa_amd_pointer_info_t, sizeInBytes));
    P("pointer_info.user_data", offsetof(hsa_amd_pointer_info_t, userData));
    P("pointer_info.agent_owner", offsetof(hsa_amd_pointer_info_t, agentOwner));
    P("pointer_info.global_flags", offsetof(hsa_amd_pointer_info_t, global_flags));
    P("dispatch_time.size", sizeof(hsa_amd_profiling_dispatch_time_t));
    P("dispatch_time.end", offsetof(hsa_amd_profiling_dispatch_time_t, end));
    P("copy_time.size", sizeof(hsa_amd_profiling_async_copy_time_t));
    P("status", sizeof(hsa_status_t));
    return 0;
}
"#;

#[test]
fn shared_structs_match_rocr_s_headers() {
    if !support::require("abi", "/usr/include/hsa/hsa_ext_amd.h") {
        return;
    }
    let dir = std::env::temp_dir().join(format!("hsa-abi-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let source = dir.join("probe.c");
    std::fs::write(&source, PROBE).unwrap();
    let binary = dir.join("probe");
    let built = process::run_with_deadline(
        Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".to_owned()))
            .arg("-o")
            .arg(&binary)
            .arg(&source),
        LIMIT,
        "compiling the layout probe",
    );
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let output = process::run_with_deadline(&mut Command::new(&binary), LIMIT, "the layout probe");
    let _ = std::fs::remove_dir_all(&dir);
    let text = String::from_utf8_lossy(&output.stdout);
    let c = |name: &str| -> usize {
        text.lines()
            .find_map(|l| l.strip_prefix(name).and_then(|v| v.strip_prefix(' ')))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("{name} missing from the probe's output: {text}"))
    };
    let rust = [
        ("event.size", size_of::<Event>()),
        ("event.event_type", offset_of!(Event, event_type)),
        ("event.agent", offset_of!(Event, agent)),
        ("event.virtual_address", offset_of!(Event, virtual_address)),
        (
            "event.fault_reason_mask",
            offset_of!(Event, fault_reason_mask),
        ),
        ("pointer_info.size", size_of::<PointerInfo>()),
        ("pointer_info.kind", offset_of!(PointerInfo, kind)),
        (
            "pointer_info.agent_base_address",
            offset_of!(PointerInfo, agent_base_address),
        ),
        (
            "pointer_info.host_base_address",
            offset_of!(PointerInfo, host_base_address),
        ),
        (
            "pointer_info.size_in_bytes",
            offset_of!(PointerInfo, size_in_bytes),
        ),
        ("pointer_info.user_data", offset_of!(PointerInfo, user_data)),
        (
            "pointer_info.agent_owner",
            offset_of!(PointerInfo, agent_owner),
        ),
        ("dispatch_time.size", size_of::<Times>()),
        ("dispatch_time.end", offset_of!(Times, end)),
        ("copy_time.size", size_of::<Times>()),
        ("status", size_of::<hsa_runtime64::Status>()),
    ];
    let wrong: Vec<String> = rust
        .iter()
        .filter(|(name, ours)| c(name) != *ours)
        .map(|(name, ours)| format!("{name}: C {} Rust {ours}", c(name)))
        .collect();
    // The event's union is larger in C than the one member aqueduct sends: only the prefix up
    // to it is shared, so the size is compared as "at most".
    let wrong: Vec<String> = wrong
        .into_iter()
        .filter(|w| !(w.starts_with("event.size") && size_of::<Event>() <= c("event.size")))
        .collect();
    assert!(
        wrong.is_empty(),
        "layouts differ from ROCr's headers: {wrong:#?}"
    );
}
