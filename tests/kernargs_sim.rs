//! Kernarg segments built by `aqueduct::kernarg` run on the simulator's shader core: the
//! `implicit_args` kernel dumps the V5/V6 hidden block it was given and derives the launch
//! geometry from it as ROCm's OCKL does; vector_add (V4, V5, V6), grid_3d and dynamic_lds
//! compute right only if explicit arguments, group sizes and the dynamic LDS offset are right.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use aql::packet::dispatch_setup;
use aql::{FenceScope, Header, KernelDispatchPacket, PacketType};
use aqueduct::kernarg::{Arg, Geometry, KernargLayout, LaunchContext};
use aqueduct::loader::{CodeObject, LoadedImage, NoExternals};
use aqueduct::sim::dispatch::{DispatchRequest, InterruptSink, ScratchSetup, ShaderCore as _};
use aqueduct::sim::host_vm::{HostBuffer, HostVm};
use aqueduct::sim::shader::Gfx9ShaderCore;
use aqueduct::sim::target::GfxTarget;
use aqueduct::sim::vm::MemoryFault;
use zerocopy::IntoBytes;

struct NoInterrupts;

impl InterruptSink for NoInterrupts {
    fn end_of_pipe(&self, _: u32) {}
    fn shader_message(&self, _: u32) {}
    fn vm_fault(&self, _: MemoryFault) {}
}

/// A simulated GFX9 GPU: memory and a shader core, no command processor (the test plays it).
struct Gpu {
    target: GfxTarget,
    vm: Arc<HostVm>,
    core: Gfx9ShaderCore,
}

struct Loaded {
    image: LoadedImage,
    _memory: HostBuffer,
}

impl Gpu {
    fn new(target: GfxTarget) -> Self {
        Self {
            target,
            vm: Arc::new(HostVm::new()),
            core: Gfx9ShaderCore::new(2),
        }
    }

    fn buffer(&self, len: usize) -> HostBuffer {
        self.vm.map(len.max(16), 256, true, false)
    }

    fn buffer_u32(&self, values: &[u32]) -> HostBuffer {
        let b = self.buffer(values.len() * 4);
        b.write(0, values.as_bytes());
        b
    }

    fn load(&self, file: &str) -> Loaded {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/kernels/bin")
            .join(self.target.name())
            .join(file);
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let co = CodeObject::parse(&bytes).unwrap_or_else(|e| panic!("{file}: {e}"));
        let memory = self.vm.map(
            co.image_size() as usize,
            co.image_align().max(4096) as usize,
            true,
            true,
        );
        let mut staging = vec![0; co.image_size() as usize];
        let image = co.load(&mut staging, memory.va(), &NoExternals).unwrap();
        memory.write(0, &staging);
        Loaded {
            image,
            _memory: memory,
        }
    }

    /// Build the kernarg segment with the builder, dispatch as a CP would, and return the
    /// segment as built.
    fn run(&self, loaded: &Loaded, name: &str, geometry: Geometry, args: &[Arg<'_>]) -> Vec<u8> {
        let kernel = loaded.image.kernel(name).expect("kernel");
        assert_eq!(
            kernel.private_segment_size, 0,
            "{name}: no scratch set up here"
        );
        let layout = KernargLayout::new(&kernel).expect("layout");
        let queue = self.buffer(256);
        let context = LaunchContext {
            queue_address: queue.va(),
            ..LaunchContext::default()
        };
        let mut segment = vec![0; layout.reserved_size() as usize];
        let shape = layout
            .write(&mut segment, &geometry, args, &context)
            .unwrap_or_else(|e| panic!("{e}"));
        let kernarg = self.vm.map(segment.len().max(16), 64, false, false);
        kernarg.write(0, &segment);
        let packet = KernelDispatchPacket {
            header: Header::new(PacketType::KERNEL_DISPATCH)
                .with_barrier(true)
                .with_acquire(FenceScope::System)
                .with_release(FenceScope::System)
                .0,
            setup: dispatch_setup(shape.dimensions),
            workgroup_size_x: shape.workgroup_size[0],
            workgroup_size_y: shape.workgroup_size[1],
            workgroup_size_z: shape.workgroup_size[2],
            grid_size_x: shape.grid_size[0],
            grid_size_y: shape.grid_size[1],
            grid_size_z: shape.grid_size[2],
            private_segment_size: 0,
            group_segment_size: shape.group_segment_size,
            kernel_object: kernel.descriptor_address,
            kernarg_address: kernarg.va(),
            ..KernelDispatchPacket::default()
        };
        let packet_memory = self.buffer(64);
        packet_memory.write(0, packet.as_bytes());
        let request = DispatchRequest {
            packet,
            packet_va: packet_memory.va(),
            queue_va: queue.va(),
            dispatch_id: 1,
            scratch: ScratchSetup::default(),
            target: self.target,
            lds_bytes_per_workgroup: 65536,
        };
        self.core
            .dispatch(&request, &*self.vm, &NoInterrupts, &AtomicBool::new(false))
            .unwrap_or_else(|e| panic!("{} {name}: {e}", self.target.name()));
        segment
    }
}

fn u32s(buffer: &HostBuffer) -> Vec<u32> {
    buffer
        .to_vec()
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

#[test]
fn implicit_args_reads_back_the_v5_and_v6_block_with_remainders() {
    for target in [GfxTarget::Gfx90a, GfxTarget::Gfx942] {
        let gpu = Gpu::new(target);
        for version in ["co5", "co6"] {
            let loaded = gpu.load(&format!("implicit_args.{version}"));
            for geometry in [
                Geometry::d1(200, 64),
                Geometry::d1(1000, 128).with_global_offset([7, 0, 0]),
                Geometry::d3([200, 3, 2], [64, 1, 2]).with_global_offset([1, 2, 3]),
            ] {
                let groups = geometry.workgroup_count()[0] as usize;
                let dump = gpu.buffer(64 * 4);
                let derived = gpu.buffer(groups * 16);
                let segment = gpu.run(
                    &loaded,
                    "implicit_args",
                    geometry,
                    &[Arg::ptr(dump.va()), Arg::ptr(derived.va())],
                );
                let what = format!("{} {version} {geometry:?}", target.name());
                // The block starts after the two pointers (metadata: hidden_block_count_x at 16).
                let block: Vec<u32> = segment[16..16 + 256]
                    .chunks_exact(4)
                    .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
                    .collect();
                let lanes = (geometry.workgroup()[0] as usize).min(64);
                assert_eq!(&u32s(&dump)[..lanes], &block[..lanes], "{what}");
                // OCKL-style geometry, computed here from the launch itself.
                let [grid, group] = [geometry.grid()[0], geometry.workgroup()[0]];
                let full = grid / group;
                let expected: Vec<u32> = (0..groups as u32)
                    .flat_map(|g| {
                        let size = if g < full { group } else { grid % group };
                        [grid.div_ceil(group), grid, size, u32::from(geometry.dims())]
                    })
                    .collect();
                assert_eq!(u32s(&derived), expected, "{what}");
                // The fields the kernel read are the ones the launch implies.
                assert_eq!(block[0], full, "{what} block_count_x");
                assert_eq!(block[4] >> 16, grid % group, "{what} remainder_x");
                assert_eq!(
                    block[16] & 0xffff,
                    u32::from(geometry.dims()),
                    "{what} grid_dims"
                );
            }
        }
    }
}

#[test]
fn vector_add_v4_v5_v6_and_grid_3d_compute_with_built_kernargs() {
    let n = 1000u32;
    let lhs: Vec<u32> = (0..n).map(|i| i.wrapping_mul(2_654_435_761)).collect();
    let rhs: Vec<u32> = (0..n).map(|i| i ^ 0x5555).collect();
    for target in [GfxTarget::Gfx90a, GfxTarget::Gfx942] {
        let gpu = Gpu::new(target);
        let versions: &[&str] = if target == GfxTarget::Gfx90a {
            &["co4", "co5", "co6"]
        } else {
            &["co5", "co6"]
        };
        for version in versions {
            let loaded = gpu.load(&format!("vector_add.{version}"));
            let (lhs_buf, rhs_buf) = (gpu.buffer_u32(&lhs), gpu.buffer_u32(&rhs));
            let sum = gpu.buffer_u32(&vec![0xdead_beef; n as usize + 8]);
            gpu.run(
                &loaded,
                "vector_add",
                Geometry::d1(n.next_multiple_of(64), 64),
                &[
                    Arg::ptr(lhs_buf.va()),
                    Arg::ptr(rhs_buf.va()),
                    Arg::ptr(sum.va()),
                    Arg::u32(n),
                ],
            );
            let got = u32s(&sum);
            for i in 0..n as usize {
                assert_eq!(got[i], lhs[i].wrapping_add(rhs[i]), "{version} c[{i}]");
            }
            assert!(
                got[n as usize..].iter().all(|&v| v == 0xdead_beef),
                "{version} tail"
            );

            if *version == "co4" {
                continue;
            }
            // Uneven 3-D grid: group sizes in y and z come from the hidden arguments.
            let loaded = gpu.load(&format!("grid_3d.{version}"));
            let (nx, ny, nz) = (10u32, 6, 5);
            let (wx, wy, wz) = (4u32, 4, 2);
            let cells = (nx * ny * nz) as usize;
            let (coords, meta) = (gpu.buffer(cells * 4), gpu.buffer(cells * 4));
            gpu.run(
                &loaded,
                "grid_3d",
                Geometry::d3([nx, ny, nz], [wx, wy, wz]),
                &[
                    Arg::ptr(coords.va()),
                    Arg::ptr(meta.va()),
                    Arg::u32(nx),
                    Arg::u32(ny),
                    Arg::u32(nz),
                ],
            );
            let (coords, meta) = (u32s(&coords), u32s(&meta));
            for z in 0..nz {
                for y in 0..ny {
                    for x in 0..nx {
                        let k = ((z * ny + y) * nx + x) as usize;
                        assert_eq!(coords[k], x | y << 10 | z << 20, "{version} coords {k}");
                        let flat = (z % wz) * wy * wx + (y % wy) * wx + x % wx;
                        let m = (x / wx) | (y / wy) << 8 | (z / wz) << 16 | flat << 24;
                        assert_eq!(meta[k], m, "{version} meta {k}");
                    }
                }
            }
        }
    }
}

#[test]
fn dynamic_lds_gets_its_area_after_static_lds() {
    for target in [GfxTarget::Gfx90a, GfxTarget::Gfx942] {
        let gpu = Gpu::new(target);
        for version in ["co5", "co6"] {
            let loaded = gpu.load(&format!("dynamic_lds.{version}"));
            let (groups, l) = (5u32, 64u32);
            let input: Vec<u32> = (0..groups * l).map(|i| i * 3 + 1).collect();
            let (inp, out) = (
                gpu.buffer_u32(&input),
                gpu.buffer((groups * l * 4) as usize),
            );
            let segment = gpu.run(
                &loaded,
                "dynamic_lds",
                Geometry::d1(groups * l, l),
                &[Arg::ptr(inp.va()), Arg::ptr(out.va()), Arg::local(4 * l)],
            );
            // Static LDS is 4 bytes and the metadata's .pointee_align is 4: the area starts at 4.
            let offset = u32::from_le_bytes(segment[16..20].try_into().unwrap());
            assert_eq!(offset, 4, "{version}");
            let got = u32s(&out);
            for g in 0..groups {
                for i in 0..l {
                    let expect = input[(g * l + (l - 1 - i)) as usize].wrapping_add(1000 + g);
                    assert_eq!(got[(g * l + i) as usize], expect, "{version} g{g} l{i}");
                }
            }
        }
    }
}
