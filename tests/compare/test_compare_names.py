"""Kernel-name normalisation: what a rebuild changes is stripped, what differs is kept."""

from __future__ import annotations

import pytest

from aorta.comparison import names
from aorta.comparison.names import normalise, strip_templates


@pytest.mark.parametrize("raw,expected", [
    ("void  foo( float* ) ", "void foo( float* )"),
    ("matmul_kernel.kd", "matmul_kernel"),
    ("reduce.isra.0", "reduce"),
    ("reduce.isra.0.constprop.2", "reduce"),
    ("copy.clone.1", "copy"),
    ("pack.part.0", "pack"),
    ("step.cold", "step"),
    ("f.lto_priv.0", "f"),
    ("scale_clone", "scale"),
    ("scale_clone_3", "scale"),
    # Triton 2.x specialisation suffix (triton-lang/triton#1386)
    ("add_kernel_0d1d2d3de", "add_kernel"),
    ("triton__0d1d2d3d4d5d6d7d8d9d10d", "triton_"),
    ("fused_attn_3f9a1c2b7d4e5f60", "fused_attn"),
    ("fused_attn.0123456789abcdef0123", "fused_attn"),
    ("triton_poi_fused_add_mul_3", "triton_poi_fused_add_mul"),
    ("triton_per_fused__softmax_12", "triton_per_fused__softmax"),
    ("triton_red_fused_sum_0.kd", "triton_red_fused_sum"),
    # rocprofv3 kernel trace of an OpenMP offload build (tests/fixtures README: omp-trace-7x)
    ("__omp_offloading_30_57b7d__QMboundary_modPboundary_conditions_l24",
     "__omp_offloading__QMboundary_modPboundary_conditions_l24"),
    ("f.isra.0_0d1d", "f"),                          # one strip exposes another
    # cProfile in a run recorded before aorta read the address away (issue 25)
    ("<built-in method __new__ of type object at 0x7f579045ea00>",
     "<built-in method __new__ of type object>"),
])
def test_build_dependent_parts_are_stripped(raw, expected):
    assert normalise(raw) == expected
    assert normalise(expected) == expected            # idempotent


@pytest.mark.parametrize("name", [
    "conv_3d",                       # a "3d" that is not a specialisation
    "kernel_0",                      # a plain index outside Inductor's naming
    "JacobiIterationKernel",         # rocprofv3 stats fixture (jacobi-stats)
    "taylor_base(float*, float*, unsigned long, unsigned long)",   # lumi-trace-6x
    "gemm_deadbeef",                 # short hex: a word, not a hash
    "cafebabecafebabe_x",            # hex not at the end
    "abcdefabcdefabcdef",            # the whole name: no separator before it
    "<built-in method builtins.sum>",
])
def test_distinct_names_survive(name):
    assert normalise(name) == name
    assert normalise(name, match_templates=True) == name


def test_a_mangled_name_matches_its_demangled_form():
    """Issue 12.3: Proton reports `_ZN...`, torch and ncu the C++ form of the same kernel."""
    pytest.importorskip("cxxfilt")
    mangled = ("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_10AbsFunctorIfEESt5arrayIPc"
               "Lm2EEEEviT0_T1_")
    assert normalise(mangled) == ("void at::native::vectorized_elementwise_kernel<4, "
                                  "at::native::AbsFunctor<float>, std::array<char*, 2ul> >(int, "
                                  "at::native::AbsFunctor<float>, std::array<char*, 2ul>)")
    cutlass = "_ZN7cutlass7Kernel2I43cutlass_80_simt_sgemm_256x128_8x4_nn_align1EEvNT_6ParamsE"
    assert normalise(cutlass) == normalise(
        "void cutlass::Kernel2<cutlass_80_simt_sgemm_256x128_8x4_nn_align1>("
        "cutlass_80_simt_sgemm_256x128_8x4_nn_align1::Params)")


def test_templates_only_when_asked():
    # ncu's demangled name from the H200 fixture (h200/ncu/mm_details.csv)
    raw = ("void at::reduce_kernel<512, 1, at::ReduceOp<float, at::func_wrapper_t<float, "
           "at::sum_functor<float, float, float>::operator ()(at::TensorIterator &)::"
           "[lambda(float, float) (instance 1)]>, unsigned int, float, 4, 4>>(T3)")
    assert normalise(raw) == raw
    assert normalise(raw, match_templates=True) == "void at::reduce_kernel<>(T3)"


@pytest.mark.parametrize("raw,expected", [
    ("f<int, g<2>>(x)", "f<>(x)"),
    ("bool operator<(a<int>, b)", "bool operator<(a<>, b)"),
    ("operator<<<int>(x)", "operator<<<>(x)"),
    ("x->y<int>(z)", "x->y<>(z)"),
    ("at::<unnamed>::k<float>(int)", "at::<unnamed>::k<>(int)"),
    ("f<a>>b", "f<a>>b"),            # unbalanced: left alone
    ("f<a", "f<a"),
    ("x > y", "x > y"),
])
def test_strip_templates(raw, expected):
    assert strip_templates(raw) == expected


def test_matching_goes_through_the_demangler(monkeypatch):
    # Matching calls the demangler (aorta.parsers.demangle, issue 12.3) before any rule.
    monkeypatch.setattr(names, "demangle",
                        lambda n: "add_kernel(float*, float*)" if n.startswith("_Z") else n)
    normalise.cache_clear()
    try:
        assert normalise("_Z10add_kernelPfS_") == normalise("add_kernel(float*, float*)")
    finally:
        normalise.cache_clear()


def test_a_comparison_demangles_its_names_in_one_batch(monkeypatch):
    # With c++filt as the demangler each batch is a process: one per comparison, not per name.
    from aorta.comparison.build import _kernel_rows
    from aorta.comparison.model import CompareSettings
    from aorta.parsers import demangle as demangle_module
    from aorta.store.records import KernelEntry

    batches = []
    monkeypatch.setattr(demangle_module, "_cache", {})
    monkeypatch.setattr(demangle_module, "_backend_choice", lambda: (
        "counting", lambda todo: batches.append(list(todo)) or {n: n for n in todo}))
    names.normalise.cache_clear()
    mangled = [f"_Z{len(f'k{i}')}k{i}v" for i in range(40)]
    trials = [{name: KernelEntry(1.0, 1) for name in mangled} for _ in range(3)]
    rows = _kernel_rows("c", "t_kernels", trials, trials, CompareSettings())
    names.normalise.cache_clear()
    assert len(rows) == 40 and len(batches) == 1 and sorted(batches[0]) == sorted(mangled)
