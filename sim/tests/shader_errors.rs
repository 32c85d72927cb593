//! What goes wrong, and how it is reported: memory faults with the faulting address, illegal
//! (undefined or unimplemented) instructions with PC, encoding and mnemonic, traps, and aborting a kernel
//! that never ends.

// Reference implementations use the kernels' mathematical names (a, b, x, n, ...).
#![allow(clippy::many_single_char_names)]

mod shader_support;

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use amdgpu_sim::dispatch::DispatchError;
use amdgpu_sim::vm::{Access, FaultKind, MemoryFault};
use shader_support::{Arg, Gpu, TARGETS, for_each_build};
use test_support::watchdog;

#[test]
fn store_past_a_mapping_faults_at_the_first_unmapped_byte() {
    for_each_build(|gpu, v| {
        let co = gpu.load(&format!("oob_store.{v}"));
        // 16 dwords are mapped; lanes 16.. store past the end of the buffer.
        let p = gpu.buffer(64);
        let err = gpu
            .dispatch(
                &co,
                "oob_store",
                [64, 1, 1],
                [64, 1, 1],
                &[Arg::Ptr(p.va), Arg::U32(5)],
            )
            .expect_err("the store must fault");
        assert_eq!(
            err,
            DispatchError::MemoryFault(MemoryFault {
                va: p.va + 64,
                access: Access::Write,
                kind: FaultKind::NotPresent
            }),
            "{} {v}",
            gpu.dir()
        );
        // An unmapped pointer faults at lane 0's address.
        let gone = gpu.buffer(4096);
        let va = gone.va;
        gpu.vm.unmap(va);
        let err = gpu
            .dispatch(
                &co,
                "oob_store",
                [64, 1, 1],
                [64, 1, 1],
                &[Arg::Ptr(va), Arg::U32(5)],
            )
            .expect_err("unmapped");
        assert_eq!(
            err,
            DispatchError::MemoryFault(MemoryFault {
                va,
                access: Access::Write,
                kind: FaultKind::NotPresent
            })
        );
        // A valid pointer works (the control case).
        let ok = gpu.buffer(256);
        gpu.dispatch(
            &co,
            "oob_store",
            [64, 1, 1],
            [64, 1, 1],
            &[Arg::Ptr(ok.va), Arg::U32(5)],
        )
        .expect("valid store");
        assert_eq!(ok.u32s(), (0..64).map(|i| 5 + i).collect::<Vec<u32>>());
    });
}

#[test]
fn loads_from_unmapped_memory_and_stores_to_read_only_memory_fault() {
    for_each_build(|gpu, v| {
        let co = gpu.load(&format!("oob_store.{v}"));
        let out = gpu.buffer(256);
        let gone = gpu.buffer(4096);
        let va = gone.va + 128;
        gpu.vm.unmap(gone.va);
        let err = gpu
            .dispatch(
                &co,
                "oob_load",
                [64, 1, 1],
                [64, 1, 1],
                &[Arg::Ptr(va), Arg::Ptr(out.va)],
            )
            .expect_err("the load must fault");
        assert_eq!(
            err,
            DispatchError::MemoryFault(MemoryFault {
                va,
                access: Access::Read,
                kind: FaultKind::NotPresent
            }),
            "{} {v}",
            gpu.dir()
        );
        let ro = gpu.alloc(256, 256, false, false);
        let err = gpu
            .dispatch(
                &co,
                "oob_store",
                [64, 1, 1],
                [64, 1, 1],
                &[Arg::Ptr(ro.va), Arg::U32(1)],
            )
            .expect_err("read-only");
        assert_eq!(
            err,
            DispatchError::MemoryFault(MemoryFault {
                va: ro.va,
                access: Access::Write,
                kind: FaultKind::ReadOnly
            })
        );
    });
}

#[test]
fn an_undefined_opcode_is_an_illegal_instruction_with_pc_encoding_and_reason() {
    for_each_build(|gpu, v| {
        let co = gpu.load(&format!("illegal_insn.{v}"));
        let out = gpu.buffer(8);
        let err = gpu
            .dispatch(
                &co,
                "illegal_insn",
                [1, 1, 1],
                [1, 1, 1],
                &[Arg::Ptr(out.va)],
            )
            .expect_err("illegal instruction");
        let entry = co
            .image
            .kernel("illegal_insn")
            .expect("kernel")
            .entry_address;
        let DispatchError::IllegalInstruction {
            pc,
            encoding,
            mnemonic,
        } = err
        else {
            panic!("{} {v}: {err}", gpu.dir());
        };
        // s_load_dwordx2 (8 bytes), v_mov v0 (4), two v_mov with literals (8 each), s_waitcnt
        // (4), global_store_dword (8): the undefined word is at entry + 0x28, as llvm-objdump
        // shows (`.long 0xbe80ff00`).
        assert_eq!(pc, entry + 0x28, "{} {v}", gpu.dir());
        assert_eq!(encoding, vec![0xBE80_FF00]);
        assert!(mnemonic.contains("unknown SOP1 opcode 0xff"), "{mnemonic}");
        assert_eq!(
            out.u32s(),
            vec![0x1111_1111, 0],
            "stopped at the instruction"
        );
    });
}

#[test]
fn matrix_and_image_instructions_are_illegal_not_skipped() {
    for target in TARGETS {
        let gpu = Gpu::new(target);
        // v_mfma_f32_4x4x1f32 a[0:3], v0, v1, a[0:3]; s_endpgm: runs with all lanes on.
        let mfma = [0xD3C2_8000, 0x0402_0300, 0xBF81_0000];
        let raw = gpu.load_raw(&mfma);
        gpu.dispatch_raw(&raw, [64, 1, 1], [64, 1, 1], &[])
            .expect("MFMA with EXEC all ones");
        // The same after s_mov_b64 exec, 1: MFMA under a partial EXEC is refused (what it does
        // to D is undocumented), naming why.
        let raw = gpu.load_raw(&[0xBEFE_0181, mfma[0], mfma[1], mfma[2]]);
        let err = gpu
            .dispatch_raw(&raw, [64, 1, 1], [64, 1, 1], &[])
            .expect_err("mfma under partial exec");
        let DispatchError::IllegalInstruction {
            pc,
            encoding,
            mnemonic,
        } = err
        else {
            panic!("{err}")
        };
        assert_eq!(pc, raw.entry + 4);
        assert_eq!(encoding, vec![0xD3C2_8000, 0x0402_0300]);
        assert!(
            mnemonic.starts_with("v_mfma") && mnemonic.contains("EXEC not all ones"),
            "{mnemonic}"
        );
        // image_load (MIMG) does not decode in this core.
        let raw = gpu.load_raw(&[0xF000_0F00, 0x0001_0000, 0xBF81_0000]);
        let err = gpu
            .dispatch_raw(&raw, [1, 1, 1], [1, 1, 1], &[])
            .expect_err("mimg");
        let DispatchError::IllegalInstruction { pc, mnemonic, .. } = err else {
            panic!("{err}")
        };
        assert_eq!(pc, raw.entry);
        assert!(mnemonic.contains("MIMG"), "{mnemonic}");
    }
}

#[test]
fn gds_lds_direct_and_scalar_atomics_are_illegal_not_skipped() {
    // Encodings from llvm-mc-19 -show-encoding where it assembles them (s_atomic_add, on both
    // targets); by hand from the GFX9 DS and VOP1 layouts where it refuses to ("gds modifier
    // is not supported on this GPU", "lds_direct is not supported on this GPU").
    let cases: [(&str, &[u32], &str); 3] = [
        // ds_add_u32 v1, v2 gds: DS op 0 with the GDS bit (16) set.
        ("gds", &[0xD801_0000, 0x0000_0201], "ds_add_u32"),
        // v_mov_b32 v0, src_lds_direct: VOP1 op 1 with src0 = 254 (LDS direct).
        ("lds direct", &[0x7E00_02FE], "v_mov_b32"),
        // s_atomic_add s4, s[0:1], 0x0 (SMEM op 0x82).
        ("scalar atomic", &[0xC20A_0100, 0x0000_0000], "s_atomic_add"),
    ];
    for target in TARGETS {
        let gpu = Gpu::new(target);
        for (what, words, name) in cases {
            let mut code = words.to_vec();
            code.push(0xBF81_0000); // s_endpgm
            let raw = gpu.load_raw(&code);
            let err = gpu
                .dispatch_raw(&raw, [64, 1, 1], [64, 1, 1], &[])
                .expect_err(what);
            let DispatchError::IllegalInstruction {
                pc,
                encoding,
                mnemonic,
            } = err
            else {
                panic!("{what} on {target:?}: {err}")
            };
            assert_eq!(pc, raw.entry, "{what}");
            assert_eq!(encoding, words.to_vec(), "{what}");
            assert!(mnemonic.contains(name), "{what}: {mnemonic}");
        }
    }
}

#[test]
fn abort_stops_a_kernel_that_never_ends() {
    for target in TARGETS {
        let gpu = Gpu::new(target);
        // s_branch -1: loops forever.
        let raw = gpu.load_raw(&[0xBF82_FFFF]);
        let start = Instant::now();
        let slices_before = gpu.core.slices_run();
        let _watchdog = watchdog::arm(
            watchdog::HANG_DEADLINE,
            "the endless kernel's dispatch to end at the abort",
        );
        let result = std::thread::scope(|s| {
            let run = s.spawn(|| gpu.dispatch_raw(&raw, [256, 1, 1], [64, 1, 1], &[]));
            // Abort only once the loop runs: a few slices past the start (each one is a
            // bounded run of the loop's instructions).
            let looping = test_support::wait::until(Duration::from_secs(30), || {
                gpu.core.slices_run() >= slices_before + 3
            });
            gpu.abort.store(true, Ordering::SeqCst);
            assert!(looping, "the endless loop never ran");
            run.join().expect("dispatch thread")
        });
        assert_eq!(result, Err(DispatchError::Aborted));
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "abort is honoured promptly"
        );
        gpu.abort.store(false, Ordering::SeqCst);
    }
}

#[test]
fn s_trap_reports_a_trap_and_sendmsg_interrupts() {
    for target in TARGETS {
        let gpu = Gpu::new(target);
        let code = [
            0xC002_0100,
            0x0000_0008, // s_load_dword s4, s[0:1], 0x8
            0xBF8C_C07F, // s_waitcnt lgkmcnt(0)
            0xBEFC_0004, // s_mov_b32 m0, s4
            0xBF90_0001, // s_sendmsg sendmsg(MSG_INTERRUPT)
            0xBF92_0002, // s_trap 2
            0xBF81_0000, // s_endpgm
        ];
        let raw = gpu.load_raw(&code);
        let mut kernarg = [0u8; 16];
        kernarg[8..12].copy_from_slice(&0xab12_3456u32.to_le_bytes());
        let err = gpu
            .dispatch_raw(&raw, [64, 1, 1], [64, 1, 1], &kernarg)
            .expect_err("trap");
        assert_eq!(
            err,
            DispatchError::Trap {
                pc: raw.entry + 5 * 4,
                code: 2
            }
        );
        // M0's low 24 bits travel with the interrupt.
        assert_eq!(
            *gpu.interrupts.shader_messages.lock().expect("lock"),
            vec![0x12_3456]
        );
    }
}
