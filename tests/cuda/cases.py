"""Reproducers: minimal scripts that make the real libraries print what users paste.

Each case is a whole script run in a subprocess (``python script.py``, or ``torchrun`` for the multi-process
cases) with stdout and stderr merged, as a terminal shows them. ``wording`` is a regex the output must contain
(taken from the raise site; see docs/conformance.md), ``expected`` the entry id or family that must rank first,
or ``none`` for a look-alike that must get no dtype diagnosis. ``device`` says what the case needs: ``cpu`` cases
run (and are recorded) on any machine with torch, ``cuda`` cases need one GPU.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Case:
    name: str
    """File stem of the recording (tests/data/recorded/<name>.log / .yaml)."""
    device: str
    """``cpu`` or ``cuda``."""
    expected: str
    """Entry id or family that must rank first; ``none`` for a look-alike."""
    wording: str
    """Regex the merged output must contain."""
    script: str
    """The reproducer, a whole Python script."""
    nproc: int = 0
    """0 runs ``python script``; N > 0 runs ``torchrun --nproc-per-node N script``."""
    needs: tuple[str, ...] = field(default=())
    """Importable modules the case needs beyond torch (skipped without them)."""
    env: tuple[tuple[str, str], ...] = field(default=())
    """Extra environment variables."""


_F = "import torch\nimport torch.nn.functional as F\n"

CPU: list[Case] = [
    Case(
        "cpu-linear-half-weight-float-input",
        "cpu",
        "mat1-mat2-dtype",
        r"mat1 and mat2 must have the same dtype",
        _F + "model = torch.nn.Linear(3, 4).half()\nmodel(torch.randn(2, 3))\n",
    ),
    Case(
        "cpu-matmul-float-double",
        "cpu",
        "mat1-mat2-dtype",
        r"expected m1 and m2 to have the same dtype",
        _F + "torch.randn(2, 3) @ torch.randn(3, 2, dtype=torch.float64)\n",
    ),
    Case(
        "cpu-bmm-float-bf16",
        "cpu",
        "scalar-type-mismatch",
        r"expected scalar type Float but found BFloat16",
        _F + "torch.bmm(torch.randn(1, 2, 3), torch.randn(1, 3, 2, dtype=torch.bfloat16))\n",
    ),
    Case(
        "cpu-conv-bf16-input",
        "cpu",
        "input-weight-type",
        r"Input type \(c10::BFloat16\) and bias type \(float\)",
        _F + "torch.nn.Conv2d(3, 3, 3)(torch.randn(1, 3, 8, 8, dtype=torch.bfloat16))\n",
    ),
    Case(
        "cpu-gradscaler-fp16-grads",
        "cpu",
        "DTF006",
        r"Attempting to unscale FP16 gradients\.",
        _F + "p = torch.nn.Parameter(torch.randn(3, dtype=torch.half))\np.grad = torch.randn(3, dtype=torch.half)\n"
        "opt = torch.optim.SGD([p], lr=0.1)\nscaler = torch.amp.GradScaler('cpu')\n"
        "scaler.scale(torch.tensor(1.0))\nscaler.unscale_(opt)\n",
    ),
    Case(
        "cpu-bf16-to-numpy",
        "cpu",
        "DTF104",
        r"Got unsupported ScalarType BFloat16",
        _F + "torch.ones(2, dtype=torch.bfloat16).numpy()\n",
        needs=("numpy",),
    ),
    Case(
        "cpu-cross-entropy-float-target",
        "cpu",
        "DTF109",
        r"expected target dtype to be Long or Byte, but got Float",
        _F + "F.cross_entropy(torch.randn(3, 5), torch.tensor([1.0, 2.0, 3.0]))\n",
    ),
    Case(
        "cpu-nll-loss-int32-target",
        "cpu",
        "DTF109",
        r"expected target dtype to be Long or Byte, but got Int",
        _F + "F.nll_loss(torch.randn(3, 5), torch.tensor([1, 2, 3], dtype=torch.int32))\n",
    ),
    Case(
        "cpu-embedding-float-indices",
        "cpu",
        "DTF110",
        r"Expected tensor for argument #1 'indices'",
        _F + "torch.nn.Embedding(10, 3)(torch.tensor([1.0]))\n",
    ),
    Case(
        "cpu-sdpa-mixed-dtypes",
        "cpu",
        "DTF107",
        r"Expected query, key, and value to have the same dtype",
        _F + "q = torch.randn(1, 2, 4, 8)\nk = torch.randn(1, 2, 4, 8, dtype=torch.bfloat16)\n"
        "F.scaled_dot_product_attention(q, k, k.clone())\n",
    ),
    Case(
        "cpu-fill-half-overflow",
        "cpu",
        "DTF105",
        r"cannot be converted to type c10::Half without overflow",
        _F + "torch.full((2,), 70000, dtype=torch.half)\n",
    ),
    Case(
        "cpu-index-put-dtypes",
        "cpu",
        "DTF714",
        r"Index put requires the source and destination dtypes match",
        _F + "torch.zeros(3).index_put_((torch.tensor([0]),), torch.tensor([1.0], dtype=torch.float64))\n",
    ),
    Case(
        "cpu-bce-long-target",
        "cpu",
        "DTF132",
        r"Found dtype Long but expected Float",
        _F + "F.binary_cross_entropy(torch.rand(3), torch.tensor([1, 0, 1]))\n",
    ),
    Case(
        "cpu-cholesky-half",
        "cpu",
        "half-not-implemented-cpu",
        r"\"cholesky_cpu\" not implemented for 'Half'",
        _F + "torch.linalg.cholesky(torch.eye(2).half())\n",
    ),
    Case(
        "cpu-cuda-on-cpu-only-build",
        "cpu",
        "DTF484",
        r"Torch not compiled with CUDA enabled",
        _F + "if torch.cuda.is_available():\n    raise SystemExit('this case needs a CPU-only build')\n"
        "torch.zeros(1).cuda()\n",
    ),
    Case(
        "cpu-lstm-meta-input",
        "cpu",
        "DTF480",
        r"Input and parameter tensors are not at the same device",
        _F + "torch.nn.LSTM(2, 3)(torch.randn(4, 1, 2, device='meta'))\n",
    ),
    Case(
        "cpu-long-add-float-inplace",
        "cpu",
        "DTF130",
        r"result type Float can't be cast to the desired output type Long",
        _F + "torch.zeros(3, dtype=torch.long).add_(torch.randn(3))\n",
    ),
    Case(
        "cpu-index-with-float-tensor",
        "cpu",
        "DTF140",
        r"tensors used as indices must be long, int",
        _F + "torch.arange(5)[torch.tensor([1.0])]\n",
    ),
    Case(
        "cpu-meta-linear-cpu-input",
        "cpu",
        "meta-tensor",
        r"Tensor on device meta is not on the expected device cpu!",
        _F + "model = torch.nn.Linear(3, 4, device='meta')\nmodel(torch.randn(2, 3))\n",
    ),
    Case(
        "cpu-meta-tensor-item",
        "cpu",
        "meta-tensor",
        r"meta tensors",
        _F + "torch.zeros(2, device='meta').sum().item()\n",
    ),
    Case(
        "cpu-torchrun-gloo-rank1-dtype",
        "cpu",
        "mat1-mat2-dtype",
        r"\[rank1\]:.*mat1 and mat2 must have the same dtype",
        _F + "import os\nimport torch.distributed as dist\ndist.init_process_group('gloo')\n"
        "rank = dist.get_rank()\nmodel = torch.nn.Linear(3, 4)\nif rank == 1:\n    model = model.half()\n"
        "for step in range(2):\n    print(f'step {step} rank {rank}', flush=True)\n"
        "    out = model(torch.randn(2, 3))\n    dist.barrier()\ndist.destroy_process_group()\n",
        nproc=2,
        env=(("OMP_NUM_THREADS", "1"),),
    ),
    # Look-alikes: real failures (or a healthy run) that are not dtype / device problems.
    Case(
        "cpu-lookalike-shape-error",
        "cpu",
        "none",
        r"mat1 and mat2 shapes cannot be multiplied",
        _F + "torch.nn.Linear(3, 4)(torch.randn(2, 5))\n",
    ),
    Case(
        "cpu-lookalike-healthy-noisy-run",
        "cpu",
        "none",
        r"training done",
        "import sys\nimport warnings\nimport torch\n"
        "warnings.warn('torch.cuda.amp.GradScaler(args...) is deprecated. Please use torch.amp.GradScaler(\"cuda\", args...) instead.', FutureWarning)\n"
        "model = torch.nn.Linear(4, 1)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "for step in range(1, 21):\n    loss = model(torch.randn(8, 4)).pow(2).mean()\n"
        "    opt.zero_grad()\n    loss.backward()\n    opt.step()\n"
        "    sys.stderr.write(f'\\r{step * 5:3d}%|' + '#' * (step // 2) + f'| {step}/20 [00:00<00:00, loss={loss.item():.4f}]')\n"
        "sys.stderr.write('\\n')\nprint('training done', flush=True)\n",
    ),
    Case(
        "cpu-lookalike-index-out-of-range",
        "cpu",
        "none",
        r"index out of range in self",
        _F + "torch.nn.Embedding(10, 3)(torch.tensor([12]))\n",
    ),
    Case(
        "cpu-lookalike-keyerror-in-dataset",
        "cpu",
        "none",
        r"KeyError: 'labels'",
        "import torch\nfrom torch.utils.data import DataLoader, Dataset\n\n\nclass Rows(Dataset):\n"
        "    def __len__(self):\n        return 4\n\n    def __getitem__(self, i):\n"
        "        return {'input_ids': torch.tensor([i])}\n\n\nfor batch in DataLoader(Rows(), batch_size=2):\n"
        "    print(batch['labels'])\n",
    ),
]

_CUDA_HEAD = _F + "assert torch.cuda.is_available()\n"

CUDA: list[Case] = [
    Case(
        "cuda-gradscaler-bf16-params",
        "cuda",
        "DTF101",
        r"\"_amp_foreach_non_finite_check_and_unscale_cuda\" not implemented for 'BFloat16'",
        _CUDA_HEAD + "model = torch.nn.Linear(8, 8).cuda().to(torch.bfloat16)\n"
        "opt = torch.optim.AdamW(model.parameters())\nscaler = torch.amp.GradScaler('cuda')\n"
        "with torch.autocast('cuda', dtype=torch.float16):\n    loss = model(torch.randn(4, 8, device='cuda', dtype=torch.bfloat16)).float().mean()\n"
        "scaler.scale(loss).backward()\nscaler.unscale_(opt)\n",
    ),
    Case(
        "cuda-gradscaler-fp16-params",
        "cuda",
        "DTF006",
        r"Attempting to unscale FP16 gradients\.",
        _CUDA_HEAD + "model = torch.nn.Linear(8, 8).cuda().half()\nopt = torch.optim.AdamW(model.parameters())\n"
        "scaler = torch.amp.GradScaler('cuda')\nloss = model(torch.randn(4, 8, device='cuda').half()).float().mean()\n"
        "scaler.scale(loss).backward()\nscaler.step(opt)\n",
    ),
    Case(
        "cuda-gradscaler-no-grads",
        "cuda",
        "DTF142",
        r"No inf checks were recorded for this optimizer\.",
        _CUDA_HEAD + "model = torch.nn.Linear(8, 8).cuda()\nopt = torch.optim.AdamW(model.parameters())\n"
        "scaler = torch.amp.GradScaler('cuda')\nscaler.scale(torch.tensor(1.0, device='cuda'))\nscaler.step(opt)\n",
    ),
    Case(
        "cuda-nll-loss-float-target",
        "cuda",
        "DTF109",
        r"expected target dtype to be Long or Byte, but got Float|\"nll_loss_forward_reduce_cuda_kernel_2d_index\" not implemented for 'Float'",
        _CUDA_HEAD
        + "F.cross_entropy(torch.randn(3, 5, device='cuda'), torch.tensor([1.0, 2.0, 3.0], device='cuda'))\n",
    ),
    Case(
        "cuda-nll-loss-int32-target",
        "cuda",
        "DTF109",
        r"expected target dtype to be Long or Byte, but got Int|not implemented for 'Int'",
        _CUDA_HEAD
        + "F.nll_loss(torch.randn(3, 5, device='cuda'), torch.tensor([1, 2, 3], device='cuda', dtype=torch.int32))\n",
    ),
    Case(
        "cuda-linear-cpu-input",
        "cuda",
        "device-mismatch",
        r"Expected all tensors to be on the same device, but (found at least two devices|got) .*cuda:0.*cpu|cpu.*cuda:0",
        _CUDA_HEAD + "model = torch.nn.Linear(3, 4).cuda()\nmodel(torch.randn(2, 3))\n",
    ),
    Case(
        "cuda-embedding-cpu-ids",
        "cuda",
        "device-mismatch",
        r"Expected all tensors to be on the same device",
        _CUDA_HEAD + "emb = torch.nn.Embedding(10, 4).cuda()\nemb(torch.tensor([[1, 2, 3]]))\n",
    ),
    Case(
        "cuda-cat-cuda-and-cpu",
        "cuda",
        "device-mismatch",
        r"Expected all tensors to be on the same device",
        _CUDA_HEAD + "torch.cat([torch.zeros(2, device='cuda'), torch.zeros(2)])\n",
    ),
    Case(
        "cuda-conv-cpu-input",
        "cuda",
        "input-weight-type",
        r"Input type \(torch\.FloatTensor\) and weight type \(torch\.cuda\.FloatTensor\) should be the same|Expected all tensors to be on the same device",
        _CUDA_HEAD + "torch.nn.Conv2d(3, 3, 3).cuda()(torch.randn(1, 3, 8, 8))\n",
    ),
    Case(
        "cuda-lstm-cpu-input",
        "cuda",
        "DTF480",
        r"Input and parameter tensors are not at the same device",
        _CUDA_HEAD + "torch.nn.LSTM(2, 3).cuda()(torch.randn(4, 1, 2))\n",
    ),
    Case(
        "cuda-tensor-to-numpy",
        "cuda",
        "DTF483",
        r"can't convert cuda:0 device type tensor to numpy",
        _CUDA_HEAD + "torch.ones(2, device='cuda').numpy()\n",
        needs=("numpy",),
    ),
    Case(
        "cuda-invalid-device-ordinal",
        "cuda",
        "DTF491",
        r"invalid device ordinal",
        _CUDA_HEAD + "torch.zeros(1, device=f'cuda:{torch.cuda.device_count()}')\n",
    ),
    Case(
        "cuda-cpu-tensor-gpu-indices",
        "cuda",
        "DTF485",
        r"indices should be either on cpu or on the same device as the indexed tensor \(cpu\)",
        _CUDA_HEAD + "torch.arange(5)[torch.tensor([1], device='cuda')]\n",
    ),
    Case(
        "cuda-sdpa-mixed-dtypes",
        "cuda",
        "DTF107",
        r"Expected query, key, and value to have the same dtype",
        _CUDA_HEAD + "q = torch.randn(1, 2, 4, 64, device='cuda', dtype=torch.float16)\nk = q.float()\n"
        "F.scaled_dot_product_attention(q, k, k.clone())\n",
    ),
    Case(
        "cuda-sdpa-flash-fp32",
        "cuda",
        "DTF020|sdpa|none",
        r"No available kernel|Flash attention",
        _CUDA_HEAD
        + "from torch.nn.attention import SDPBackend, sdpa_kernel\nq = torch.randn(1, 2, 4, 64, device='cuda')\n"
        "with sdpa_kernel(SDPBackend.FLASH_ATTENTION):\n    F.scaled_dot_product_attention(q, q, q)\n",
    ),
    Case(
        "cuda-sdpa-int-mask",
        "cuda",
        "DTF141",
        r"Expected attn_mask dtype to be bool or float or to match query dtype",
        _CUDA_HEAD + "q = torch.randn(1, 2, 4, 64, device='cuda', dtype=torch.float16)\n"
        "F.scaled_dot_product_attention(q, q, q, attn_mask=torch.ones(4, 4, device='cuda', dtype=torch.long))\n",
    ),
    Case(
        "cuda-meta-to-cuda",
        "cuda",
        "meta-tensor",
        r"Cannot copy out of meta tensor; no data!",
        _CUDA_HEAD + "torch.nn.Linear(3, 4, device='meta').to('cuda')\n",
    ),
    Case(
        "cuda-checkpoint-on-missing-gpu",
        "cuda",
        "DTF482",
        r"Attempting to deserialize object on CUDA device \d+",
        _CUDA_HEAD
        + "import io\nbuf = io.BytesIO()\ntorch.save({'w': torch.ones(2, device='cuda')}, buf)\nbuf.seek(0)\n"
        "n = torch.cuda.device_count()\ntorch.load(buf, map_location={'cuda:0': f'cuda:{n}'})\n",
    ),
    Case(
        "cuda-dataloader-default-device",
        "cuda",
        "DTF490",
        r"Expected a 'cuda' device type for generator",
        _CUDA_HEAD + "torch.set_default_device('cuda')\nfrom torch.utils.data import DataLoader\n"
        "for batch in DataLoader(list(range(8)), batch_size=2, shuffle=True):\n    print(batch)\n",
    ),
    Case(
        "cuda-autocast-linear-outside",
        "cuda",
        "mat1-mat2-dtype",
        r"mat1 and mat2 must have the same dtype",
        _CUDA_HEAD + "model = torch.nn.Linear(8, 8).cuda()\nwith torch.autocast('cuda', dtype=torch.bfloat16):\n"
        "    h = model(torch.randn(2, 8, device='cuda'))\nmodel(h)\n",
    ),
    Case(
        "cuda-torchrun-gloo-rank1-device",
        "cuda",
        "device-mismatch",
        r"\[rank1\]:.*Expected all tensors to be on the same device",
        _F + "import torch.distributed as dist\ndist.init_process_group('gloo')\nrank = dist.get_rank()\n"
        "model = torch.nn.Linear(3, 4).to('cuda:0')\nx = torch.randn(2, 3, device='cuda:0' if rank == 0 else 'cpu')\n"
        "model(x)\ndist.barrier()\ndist.destroy_process_group()\n",
        nproc=2,
    ),
    Case(
        "cuda-accelerate-fp8-no-backend",
        "cuda",
        "DTF252",
        r"fp8|FP8|Transformer ?Engine|MS-AMP|torchao",
        "import torch\nfrom accelerate import Accelerator\nacc = Accelerator(mixed_precision='fp8')\n"
        "model = torch.nn.Linear(16, 16)\nopt = torch.optim.AdamW(model.parameters())\n"
        "model, opt = acc.prepare(model, opt)\nprint(acc.mixed_precision)\n",
        needs=("accelerate",),
    ),
    Case(
        "cuda-trainer-fp16-bf16-model",
        "cuda",
        "DTF101",
        r"not implemented for 'BFloat16'",
        "import torch\nfrom transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments\n"
        "model = GPT2LMHeadModel(GPT2Config(n_layer=1, n_embd=32, n_head=2, vocab_size=64)).to(torch.bfloat16)\n"
        "data = [{'input_ids': torch.arange(8), 'labels': torch.arange(8)} for _ in range(4)]\n"
        "args = TrainingArguments('/tmp/dtf-out', fp16=True, per_device_train_batch_size=2, max_steps=1, report_to=[], save_strategy='no')\n"
        "Trainer(model=model, args=args, train_dataset=data).train()\n",
        needs=("transformers", "accelerate"),
    ),
    Case(
        "cuda-peft-lora-bf16-base-fp16-amp",
        "cuda",
        "DTF101",
        r"not implemented for 'BFloat16'|Attempting to unscale FP16 gradients",
        "import torch\nfrom peft import LoraConfig, get_peft_model\n"
        "from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments\n"
        "model = GPT2LMHeadModel(GPT2Config(n_layer=1, n_embd=32, n_head=2, vocab_size=64)).to(torch.bfloat16)\n"
        "model = get_peft_model(model, LoraConfig(r=4, target_modules=['c_attn'], autocast_adapter_dtype=False))\n"
        "data = [{'input_ids': torch.arange(8), 'labels': torch.arange(8)} for _ in range(4)]\n"
        "args = TrainingArguments('/tmp/dtf-out', fp16=True, per_device_train_batch_size=2, max_steps=1, report_to=[], save_strategy='no')\n"
        "Trainer(model=model, args=args, train_dataset=data).train()\n",
        needs=("transformers", "accelerate", "peft"),
    ),
    # Look-alikes on the GPU.
    Case(
        "cuda-lookalike-oom",
        "cuda",
        "none",
        r"CUDA out of memory|OutOfMemoryError",
        _CUDA_HEAD + "torch.empty(1 << 46, device='cuda', dtype=torch.uint8)\n",
    ),
    Case(
        "cuda-lookalike-device-side-assert",
        "cuda",
        "none",
        r"device-side assert triggered|index out of bounds",
        _CUDA_HEAD
        + "emb = torch.nn.Embedding(10, 4).cuda()\nout = emb(torch.tensor([12], device='cuda'))\ntorch.cuda.synchronize()\nprint(out)\n",
        env=(("CUDA_LAUNCH_BLOCKING", "1"),),
    ),
    Case(
        "cuda-lookalike-shape-error",
        "cuda",
        "none",
        r"mat1 and mat2 shapes cannot be multiplied",
        _CUDA_HEAD + "torch.nn.Linear(3, 4).cuda()(torch.randn(2, 5, device='cuda'))\n",
    ),
]

CASES: list[Case] = CPU + CUDA
