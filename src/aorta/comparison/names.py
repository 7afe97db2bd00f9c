"""Kernel-name normalisation, so one kernel keeps one name across builds (every rule, with
samples: docs/compare.md). A mangled C++ name is first demangled (`aorta.parsers.demangle`) to
match another profiler's demangled name; then each rule strips one build-dependent part, in
order, and `normalise` is idempotent. Kernels of one trial that normalise alike are summed.
"""

from __future__ import annotations

import re
from functools import lru_cache

from aorta.parsers.demangle import demangle

_SPACES = re.compile(r"\s+")
_RULES = (                      # (pattern, replacement), each with a sample of what it strips
    # AMD code-object descriptor: `matmul_kernel.kd`
    (re.compile(r"\.kd$"), ""),
    # GCC/Clang clones: `reduce.isra.0.constprop.2`, `copy.clone.1`, `step.cold`, `scale_clone_3`
    (re.compile(r"(?:\.(?:clone|isra|constprop|part|lto_priv)(?:\.\d+)?|\.cold)+$"
                r"|_clone(?:_\d+)?$"), ""),
    # Triton 2.x specialisation (triton-lang/triton#1386): `add_kernel_0d1d2d3de`; at least
    # one specialisation letter, so a plain `_0` or `_012` survives.
    (re.compile(r"_(?=[0-9cde]*[cde])0[cde]*(?:\d+[cde]*)*$"), ""),
    # hash suffix, 16+ hex digits with a digit and a letter: `fused_attn_3f9a1c2b7d4e5f60`
    (re.compile(r"[_.-](?=[0-9a-fA-F]*\d)(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{16,}$"), ""),
    # TorchInductor's counter, which follows graph order: `triton_poi_fused_add_mul_3`
    (re.compile(r"^(triton_(?:poi|red|per|tem|for|unk|mm|bmm)_\w*?)_\d+$"), r"\1"),
    # OpenMP offload device and file ids: `__omp_offloading_30_57b7d__QMnorm_modPnorm_l23`
    (re.compile(r"^__omp_offloading_[0-9a-fA-F]+_[0-9a-fA-F]+_"), "__omp_offloading_"),
    # cProfile's object address, read away since (older runs still hold it):
    # `<built-in method __new__ of type object at 0x7f579045ea00>`
    (re.compile(r" at 0x[0-9a-fA-F]+(?=>$)"), ""),
)
_OPERATOR = re.compile(r"operator\s*(?:<<=|<<|<=>|<=|<|->\*|->|>>=|>>|>=|>)")


@lru_cache(maxsize=1 << 16)
def normalise(name: str, match_templates: bool = False) -> str:
    """The name with build-dependent parts removed; cached, as every trial repeats the names."""
    text = _SPACES.sub(" ", demangle(name)).strip()
    for _ in range(8):   # one strip can expose another: `f.isra.0_0d1d` -> `f.isra.0` -> `f`
        stripped = text
        for pattern, replacement in _RULES:
            stripped = pattern.sub(replacement, stripped)
        stripped = strip_templates(stripped) if match_templates else stripped
        if stripped == text:
            break
        text = stripped
    return text or name


def strip_templates(name: str) -> str:
    """Empty every top-level `<...>` template argument list: `f<int, g<2>>(x)` -> `f<>(x)`.
    Only a `<` right after a name character opens one, so `<built-in method sum>`,
    `at::<unnamed>` and `operator<` and friends stay whole. Unbalanced brackets: the name
    comes back unchanged, as a guess would merge kernels that differ."""
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
        opens = i == operator_end or (i > 0 and (name[i - 1].isalnum() or name[i - 1] == "_"))
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
