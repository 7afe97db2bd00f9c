"""Kernel-name normalisation, so one kernel keeps one name across builds.

A rebuild renames kernels without changing them. Each rule below strips one such part; the
rules run in order and `normalise` is idempotent. Samples of what each rule sees:

- whitespace: `void  foo( float* )` -> `void foo( float* )` (runs collapse, ends trimmed)
- AMD code-object descriptor: `matmul_kernel.kd` -> `matmul_kernel`
- compiler clones (GCC/Clang): `reduce.isra.0.constprop.2`, `copy.clone.1`, `pack.part.0`,
  `step.cold`, `f.lto_priv.0` -> the base name; also `scale_clone`, `scale_clone_3`
- Triton specialisation suffix (Triton 2.x appended the argument specialisation, see
  https://github.com/triton-lang/triton/issues/1386): `add_kernel_0d1d2d3de` -> `add_kernel`
- hash suffixes (cache keys, build ids): `fused_attn_3f9a1c2b7d4e5f60` -> `fused_attn`, for a
  hex run of 16+ digits holding a digit and a letter
- TorchInductor kernel index: `triton_poi_fused_add_mul_3` -> `triton_poi_fused_add_mul`
  (the trailing counter follows graph order, which any change upstream shifts)
- OpenMP offload entries embed device and file ids that change per machine and build:
  `__omp_offloading_30_57b7d__QMnorm_modPnorm_l23` -> `__omp_offloading__QMnorm_modPnorm_l23`
- `--match-templates` only: `void at::reduce_kernel<512, 1, at::ReduceOp<float>>(T3)` ->
  `void at::reduce_kernel<>(T3)`, every top-level template argument list emptied.

Two kernels of one trial that normalise to one name are summed; rows keep the original names.
Mangled C++ names (`_ZN2at6native...`) are left as they are until a demangler is plugged in
at `demangled` below, the one place matching would call it.
"""

from __future__ import annotations

import re
from functools import lru_cache

_SPACES = re.compile(r"\s+")
_AMD_DESCRIPTOR = re.compile(r"\.kd$")
_CLONES = re.compile(r"(?:\.(?:clone|isra|constprop|part|lto_priv)(?:\.\d+)?|\.cold)+$"
                     r"|_clone(?:_\d+)?$")
_TRITON_SPEC = re.compile(r"_(0[cde]*(?:\d+[cde]*)*)$")
_HASH = re.compile(r"[_.-]([0-9a-fA-F]{16,})$")
_INDUCTOR = re.compile(r"^(triton_(?:poi|red|per|tem|for|unk|mm|bmm)_\w*?)_\d+$")
_OMP_OFFLOAD = re.compile(r"^__omp_offloading_[0-9a-fA-F]+_[0-9a-fA-F]+_")
_OPERATOR = re.compile(r"operator\s*(?:<<=|<<|<=>|<=|<|->\*|->|>>=|>>|>=|>)")


def demangled(name: str) -> str:
    """The name as matching sees it, before the rules above: a mangled `_ZN...` name in its
    C++ form (`aorta.parsers.demangle`), so that a kernel one profiler reports mangled matches the
    demangled name another reports; other names pass through unchanged."""
    from aorta.parsers.demangle import demangle

    return demangle(name)


@lru_cache(maxsize=1 << 16)
def normalise(name: str, match_templates: bool = False) -> str:
    """The name with build-dependent parts removed (see the module docstring). Cached: a
    run repeats each kernel name in every trial."""
    text = _SPACES.sub(" ", demangled(name)).strip()
    for _ in range(8):   # one strip can expose another: `f.isra.0_0d1d` -> `f.isra.0` -> `f`
        stripped = _strip_once(text, match_templates)
        if stripped == text:
            break
        text = stripped
    return text or name


def _strip_once(text: str, match_templates: bool) -> str:
    text = _AMD_DESCRIPTOR.sub("", text)
    text = _CLONES.sub("", text)
    text = _strip_triton_specialisation(text)
    text = _strip_hash(text)
    text = _INDUCTOR.sub(r"\1", text)
    text = _OMP_OFFLOAD.sub("__omp_offloading_", text)
    return strip_templates(text) if match_templates else text


def _strip_triton_specialisation(text: str) -> str:
    match = _TRITON_SPEC.search(text)
    # At least one specialisation letter, so a plain `_0` or `_012` survives.
    if match and re.search(r"[cde]", match.group(1)):
        return text[: match.start()]
    return text


def _strip_hash(text: str) -> str:
    match = _HASH.search(text)
    if match and re.search(r"\d", match.group(1)) and re.search(r"[a-fA-F]", match.group(1)):
        return text[: match.start()]
    return text


def strip_templates(name: str) -> str:
    """Empty every top-level `<...>` template argument list: `f<int, g<2>>(x)` -> `f<>(x)`.

    Only a `<` right after a name character opens a template: `<built-in method sum>` or
    `at::<unnamed>` are kept whole, as are `operator<`, `operator<<`, `operator->` and
    friends. A name with unbalanced brackets is returned unchanged: guessing would merge
    kernels that differ."""
    out: list[str] = []
    depth = 0      # inside a template argument list (dropped)
    literal = 0    # inside a bracket that is not a template (kept)
    operator_end = -1
    i = 0
    while i < len(name):
        char = name[i]
        operator = _OPERATOR.match(name, i) if depth == 0 and char == "o" else None
        if operator:
            out.append(operator.group(0))
            i = operator_end = operator.end()
            continue
        opens = i == operator_end or _opens_template(name, i)
        closes = char == ">" and (i == 0 or name[i - 1] != "-")
        if depth == 0 and (literal or (char == "<" and not opens)):
            literal += (char == "<") - closes
            out.append(char)
        elif char == "<":
            depth += 1
            if depth == 1:
                out.append("<")
        elif closes:
            depth -= 1
            if depth < 0:
                return name
            if depth == 0:
                out.append(">")
        elif depth == 0:
            out.append(char)
        i += 1
    return "".join(out) if depth == 0 and literal == 0 else name


def _opens_template(name: str, at: int) -> bool:
    return at > 0 and (name[at - 1].isalnum() or name[at - 1] == "_")
