//! `aqueduct run`: load a code object, build the kernel's arguments from `--arg` specs, launch
//! it once, wait, write chosen buffers to files, and report the kernel's time.
//!
//! Everything a library user would need (picking the code object, checking arguments against
//! the metadata, filling hidden arguments, launching) is the library's; this module only turns
//! command-line text into those calls.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use aqueduct::code_object_source::CodeObjectSource;

use crate::flags::{dims, pick_gpu};
use aqueduct::kernarg::ArgKind;
use aqueduct::{Arg, Buffer, Device, Geometry, MemoryLocation, QueueOptions};

type Error = Box<dyn std::error::Error>;

/// What `aqueduct run` was asked to do.
#[derive(Debug, clap::Args)]
pub struct RunRequest {
    /// The code object, offload bundle or host binary with `.hip_fatbin`.
    pub file: PathBuf,
    /// The kernel's name (with or without `.kd`).
    pub kernel: String,
    /// Work-items per dimension: X, X,Y or X,Y,Z.
    #[arg(long, value_delimiter = ',', required = true)]
    pub grid: Vec<u32>,
    /// Work-group size per dimension: X, X,Y or X,Y,Z.
    #[arg(long, value_delimiter = ',', required = true)]
    pub block: Vec<u32>,
    /// One per explicit kernel argument, in order: u32=, i32=, u64=, i64=, f32=, f64=
    /// scalars; buf=PATH (a device buffer filled from a file), buf:zero=BYTES,
    /// buf:fill=BYTE*COUNT; lds=BYTES (dynamic LDS per work-group for a `__local`
    /// pointer argument).
    #[arg(long = "arg")]
    pub args: Vec<String>,
    /// Write buffer argument N (0-based) to PATH after the kernel: N=PATH.
    #[arg(long = "out")]
    pub outputs: Vec<String>,
    /// Run on the GPU with this target (e.g. gfx942), not the first.
    #[arg(long)]
    pub target: Option<String>,
    /// Give up waiting after this many seconds.
    #[arg(long, default_value_t = 10.0)]
    pub timeout: f64,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// One `--arg` value, parsed.
#[derive(Debug)]
enum ArgSpec {
    Scalar(Vec<u8>),
    Buffer(Vec<u8>),
    /// Bytes of dynamic LDS per work-group, for a `__local` pointer argument.
    Lds(u32),
}

pub fn run(request: &RunRequest) -> Result<(), Error> {
    let started = Instant::now();
    let device = Device::open()?;
    let gpu = pick_gpu(&device, request.target.as_deref())?;
    let agent_target = gpu.target_id;
    let source = CodeObjectSource::open(&request.file)?;
    let selected = source.select(&agent_target)?;
    let executable = device.load_code_object(&gpu, &selected.bytes)?;
    let kernel = executable.kernel(&request.kernel)?;
    let explicit = kernel.layout.explicit_args();
    if request.args.len() != explicit.len() {
        let expected: Vec<String> = explicit.iter().map(describe).collect();
        return Err(format!(
            "kernel `{}` takes {} argument(s), {} given: {}",
            kernel.name,
            explicit.len(),
            request.args.len(),
            expected.join(", ")
        )
        .into());
    }
    let specs = request
        .args
        .iter()
        .enumerate()
        .map(|(i, text)| {
            parse_arg(text).map_err(|e| format!("--arg {i} ({}): {e}", describe(&explicit[i])))
        })
        .collect::<Result<Vec<_>, String>>()?;
    let mut buffers: Vec<Option<Buffer>> = Vec::with_capacity(specs.len());
    for (i, spec) in specs.iter().enumerate() {
        buffers.push(match spec {
            ArgSpec::Buffer(_) | ArgSpec::Scalar(_)
                if matches!(explicit[i].kind(), ArgKind::Local { .. }) =>
            {
                return Err(format!(
                    "--arg {i}: the kernel expects a dynamic LDS area ({}), give lds=BYTES",
                    describe(&explicit[i])
                )
                .into());
            }
            ArgSpec::Buffer(bytes) => {
                let buffer = device.alloc(&gpu, MemoryLocation::Device, bytes.len().max(1))?;
                buffer.write(0, bytes)?;
                Some(buffer)
            }
            ArgSpec::Scalar(_) | ArgSpec::Lds(_)
                if matches!(explicit[i].kind(), ArgKind::Pointer(_)) =>
            {
                return Err(format!(
                    "--arg {i}: the kernel expects a buffer ({}), give buf=PATH, buf:zero=BYTES \
                     or buf:fill=BYTE*COUNT",
                    describe(&explicit[i])
                )
                .into());
            }
            ArgSpec::Lds(_) if !matches!(explicit[i].kind(), ArgKind::Local { .. }) => {
                return Err(format!(
                    "--arg {i}: lds= is for a dynamic LDS (`__local` pointer) argument, the \
                     kernel expects {}",
                    describe(&explicit[i])
                )
                .into());
            }
            ArgSpec::Scalar(_) | ArgSpec::Lds(_) => None,
        });
    }
    let outputs = parse_outputs(&request.outputs, &buffers)?;
    let args: Vec<Arg<'_>> = specs
        .iter()
        .zip(&buffers)
        .map(|(spec, buffer)| match (spec, buffer) {
            (_, Some(buffer)) => Arg::buffer(buffer),
            (ArgSpec::Scalar(bytes), None) => Arg::bytes(bytes),
            (ArgSpec::Lds(bytes), None) => Arg::local(*bytes),
            (ArgSpec::Buffer(_), None) => unreachable!("every buffer spec has a buffer"),
        })
        .collect();
    let geometry = geometry(&request.grid, &request.block)?;
    let queue = device.create_queue(
        &gpu,
        &QueueOptions {
            profiling: true,
            ..QueueOptions::default()
        },
    )?;
    let launched = Instant::now();
    let timeout = Duration::try_from_secs_f64(request.timeout)
        .map_err(|_| format!("--timeout {}: not a number of seconds", request.timeout))?;
    let completion = queue
        .launch(&kernel, &geometry, &args)?
        .wait(Some(timeout))?;
    let round_trip = launched.elapsed();
    for (index, path) in &outputs {
        let buffer = buffers[*index].as_ref().expect("outputs name buffers only");
        let bytes: Vec<u8> = buffer.to_vec()?;
        std::fs::write(path, bytes)
            .map_err(|e| format!("--out {index}={}: {e}", path.display()))?;
    }
    let gpu_ns = completion.gpu_time.map(|t| t.as_nanos());
    if request.json {
        let report = serde_json::json!({
            "schema": 1,
            "device": device.description(),
            "simulated": device.is_simulated(),
            "gpu_id": gpu.gpu_id,
            "target": gpu.target_id.to_string(),
            "code_object_target": selected.target.to_string(),
            "kernel": kernel.name,
            "grid": geometry.grid(),
            "block": geometry.workgroup(),
            "kernel_time_ns": gpu_ns,
            "round_trip_ns": round_trip.as_nanos(),
            "wall_time_ns": started.elapsed().as_nanos(),
            "outputs": outputs.iter().map(|(i, p)| serde_json::json!({"arg": i, "path": p})).collect::<Vec<_>>(),
        });
        println!("{report}");
    } else {
        println!(
            "{} on {} ({}): grid {:?}, block {:?}",
            kernel.name,
            device.description(),
            gpu.target_id,
            geometry.grid(),
            geometry.workgroup()
        );
        match completion.gpu_time {
            Some(time) => println!("kernel time {time:?} (GPU timestamps)"),
            None => println!("kernel time unknown (no timestamps)"),
        }
        println!(
            "launch to completion {round_trip:?}, wall {:?}",
            started.elapsed()
        );
        for (index, path) in &outputs {
            println!("argument {index} written to {}", path.display());
        }
    }
    device.shutdown()?;
    Ok(())
}

fn describe(arg: &aqueduct::kernarg::ExplicitArg) -> String {
    let name = arg.name().map_or_else(String::new, |n| format!(" `{n}`"));
    let kind = match arg.kind() {
        ArgKind::Pointer(what) => (*what).to_owned(),
        ArgKind::ByValue => format!("{}-byte value", arg.size()),
        ArgKind::Local { .. } => "dynamic LDS area".to_owned(),
        ArgKind::Unsupported(kind) => format!("unsupported kind {kind}"),
        other => format!("{other:?}"),
    };
    format!("{}{name}: {kind}", arg.metadata_index())
}

fn geometry(grid: &[u32], block: &[u32]) -> Result<Geometry, Error> {
    if grid.len() != block.len() {
        return Err(format!(
            "--grid has {} dimension(s) and --block {}: give both the same",
            grid.len(),
            block.len()
        )
        .into());
    }
    let (g, b) = (dims(grid, "grid")?, dims(block, "block")?);
    Ok(match grid.len() {
        1 => Geometry::d1(g[0], b[0]),
        2 => Geometry::d2([g[0], g[1]], [b[0], b[1]]),
        _ => Geometry::d3(g, b),
    })
}

/// `u32=`, `i32=`, `u64=`, `i64=`, `f32=`, `f64=`, `buf=PATH`, `buf:zero=BYTES`,
/// `buf:fill=BYTE*COUNT`, `lds=BYTES`.
fn parse_arg(text: &str) -> Result<ArgSpec, String> {
    let (kind, value) = text
        .split_once('=')
        .ok_or_else(|| format!("{text:?}: expected KIND=VALUE, e.g. u32=7 or buf=input.bin"))?;
    let number = |what: &str| format!("{value:?} is not a valid {what}");
    Ok(match kind {
        "u32" => ArgSpec::Scalar(
            value
                .parse::<u32>()
                .map_err(|_| number("u32"))?
                .to_le_bytes()
                .to_vec(),
        ),
        "i32" => ArgSpec::Scalar(
            value
                .parse::<i32>()
                .map_err(|_| number("i32"))?
                .to_le_bytes()
                .to_vec(),
        ),
        "u64" => ArgSpec::Scalar(
            value
                .parse::<u64>()
                .map_err(|_| number("u64"))?
                .to_le_bytes()
                .to_vec(),
        ),
        "i64" => ArgSpec::Scalar(
            value
                .parse::<i64>()
                .map_err(|_| number("i64"))?
                .to_le_bytes()
                .to_vec(),
        ),
        "f32" => ArgSpec::Scalar(
            value
                .parse::<f32>()
                .map_err(|_| number("f32"))?
                .to_le_bytes()
                .to_vec(),
        ),
        "f64" => ArgSpec::Scalar(
            value
                .parse::<f64>()
                .map_err(|_| number("f64"))?
                .to_le_bytes()
                .to_vec(),
        ),
        "buf" => ArgSpec::Buffer(
            std::fs::read(Path::new(value)).map_err(|e| format!("buf={value}: {e}"))?,
        ),
        "buf:zero" => ArgSpec::Buffer(vec![
            0;
            value
                .parse::<usize>()
                .map_err(|_| number("byte count"))?
        ]),
        "buf:fill" => {
            let (byte, count) = value
                .split_once('*')
                .ok_or_else(|| format!("buf:fill={value}: expected BYTE*COUNT, e.g. 255*4096"))?;
            let byte = parse_byte(byte)
                .ok_or_else(|| format!("buf:fill: {byte:?} is not a byte (0..255 or 0x..)"))?;
            let count = count
                .parse::<usize>()
                .map_err(|_| format!("buf:fill: {count:?} is not a count"))?;
            ArgSpec::Buffer(vec![byte; count])
        }
        "lds" => ArgSpec::Lds(value.parse::<u32>().map_err(|_| number("byte count"))?),
        other => {
            return Err(format!(
                "unknown argument kind {other:?}: use u32, i32, u64, i64, f32, f64, buf, buf:zero, \
                 buf:fill or lds"
            ));
        }
    })
}

fn parse_byte(text: &str) -> Option<u8> {
    match text.strip_prefix("0x") {
        Some(hex) => u8::from_str_radix(hex, 16).ok(),
        None => text.parse().ok(),
    }
}

/// `N=PATH` pairs, each naming a buffer argument.
fn parse_outputs(
    specs: &[String],
    buffers: &[Option<Buffer>],
) -> Result<Vec<(usize, PathBuf)>, Error> {
    specs
        .iter()
        .map(|spec| {
            let (index, path) = spec
                .split_once('=')
                .ok_or_else(|| format!("--out {spec:?}: expected N=PATH"))?;
            let index: usize = index
                .parse()
                .map_err(|_| format!("--out {spec:?}: {index:?} is not an argument index"))?;
            match buffers.get(index) {
                Some(Some(_)) => Ok((index, PathBuf::from(path))),
                Some(None) => {
                    Err(format!("--out {spec:?}: argument {index} is not a buffer").into())
                }
                None => Err(format!(
                    "--out {spec:?}: the kernel has {} argument(s)",
                    buffers.len()
                )
                .into()),
            }
        })
        .collect()
}
