"""Issue 25: a tinygrad matmul and one MNIST-sized training step (784-64-10 MLP, cross
entropy, backward, SGD) on whatever device DEV names, from fixed inputs, saved to an .npz;
`compare` checks two such files agree within float tolerance.

    DEV=CPU python3 tinygrad_vs_cpu.py run cpu.npz
    DEV=AMD:LLVM ... python3 tinygrad_vs_cpu.py run amd.npz
    python3 tinygrad_vs_cpu.py compare cpu.npz amd.npz
"""
import sys

import numpy as np


def run(out):
    from tinygrad import Device, Tensor

    rng = np.random.default_rng(25)
    a = rng.standard_normal((96, 80)).astype(np.float32)
    b = rng.standard_normal((80, 72)).astype(np.float32)
    mm = (Tensor(a) @ Tensor(b)).numpy()
    x = Tensor(rng.random((32, 784), dtype=np.float32))
    y = Tensor(rng.integers(0, 10, 32).astype(np.int32))
    w1 = Tensor((rng.standard_normal((784, 64)) * 0.05).astype(np.float32))
    w2 = Tensor((rng.standard_normal((64, 10)) * 0.1).astype(np.float32))
    loss = x.matmul(w1).relu().matmul(w2).sparse_categorical_crossentropy(y)
    loss.backward()
    new_w1 = w1 - 0.1 * w1.grad
    new_w2 = w2 - 0.1 * w2.grad
    np.savez(out, mm=mm, loss=loss.numpy(), w1=new_w1.numpy(), w2=new_w2.numpy())
    print(f"{Device.DEFAULT}: loss {float(loss.numpy()):.6f}")


def compare(first, second):
    p, q = np.load(first), np.load(second)
    worst = 0.0
    for name in ("mm", "loss", "w1", "w2"):
        if not np.allclose(p[name], q[name], rtol=1e-4, atol=1e-5):
            diff = np.abs(p[name] - q[name]).max()
            print(f"{name}: {first} and {second} differ by up to {diff}")
            return 1
        worst = max(worst, float(np.abs(p[name] - q[name]).max()))
    print(f"matmul, loss and both updated weights agree (largest difference {worst:.3g})")
    return 0


if __name__ == "__main__":
    if sys.argv[1] == "run":
        run(sys.argv[2])
    else:
        sys.exit(compare(sys.argv[2], sys.argv[3]))
