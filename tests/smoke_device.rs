use std::sync::Arc;
use std::time::Duration;

use aqueduct::sim::{Machine, MachineConfig};
use aqueduct::{Condition, Device, MemoryLocation, MemoryOrder, QueueOptions};

fn device() -> Device {
    let machine = Machine::new(
        MachineConfig::mi210()
            .with_compute_units(8)
            .with_vram(1 << 30),
    )
    .unwrap();
    Device::open_on(Arc::new(machine)).unwrap()
}

#[test]
fn smoke() {
    let device = device();
    let gpu = device.gpus().unwrap()[0].clone();
    eprintln!("{gpu:?}");
    for location in MemoryLocation::ALL {
        let b = device.alloc(&gpu, location, 4096).unwrap();
        b.write(8, &[7u32, 8, 9]).unwrap();
        let mut back = [0u32; 3];
        b.read(8, &mut back).unwrap();
        assert_eq!(back, [7, 8, 9]);
    }
    let s = device.signal(1).unwrap();
    s.sub(1, MemoryOrder::Release).unwrap();
    assert_eq!(
        s.wait(Condition::Eq, 0, Some(Duration::from_secs(1)))
            .unwrap(),
        0
    );
    let q = device.create_queue(&gpu, &QueueOptions::default()).unwrap();
    let done = device.signal(1).unwrap();
    q.barrier_and(&[], Some(&done)).unwrap();
    q.wait(&done, Condition::Eq, 0, Some(Duration::from_secs(5)))
        .unwrap();
    q.finish(Some(Duration::from_secs(5))).unwrap();
    device.shutdown().unwrap();
    assert!(q.finish(None).is_err());
    assert_eq!(s.value().unwrap_err().kind(), aqueduct::ErrorKind::Closed);
}
