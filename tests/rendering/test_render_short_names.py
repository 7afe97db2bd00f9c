"""Short names for terminal columns and chart labels, as the profilers' own tools shorten them:
they fit, they still tell names apart, and a Python function is never cut (issue 25)."""

from __future__ import annotations

import pytest

from aorta.rendering import short_name, short_names

CUTLASS = ("void cutlass::Kernel2<cutlass_80_simt_sgemm_256x128_8x4_nn_align1>"
           "(cutlass_80_simt_sgemm_256x128_8x4_nn_align1::Params)")
FILL = ("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<{t}>, "
        "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<{t}>, "
        "at::detail::Array<char*, 1>)")
REDUCE = ("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, "
          "at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>"
          "::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, "
          "4>>(at::native::ReduceOp<float>)")
ANONYMOUS = ("void at::native::(anonymous namespace)::distribution_elementwise_grid_stride_kernel"
             "<float, 4>(long, at::PhiloxCudaState)")
MATMUL = "examples/quickstart/matmul.py:16(matmul_naive)"


@pytest.mark.parametrize("width, expected", [
    (len(CUTLASS), CUTLASS),                 # a name that fits is shown as it is
    (70, "cutlass::Kernel2<cutlass_80_simt_sgemm_256x128_8x4_nn_align1>"),
    (40, "cutlass::Kernel2<...>"),
])
def test_cxx_names_read_as_nsight_short_names(width, expected):
    assert short_name(CUTLASS, width) == expected


@pytest.mark.parametrize("name, width, expected", [
    (FILL.format(t="float"), 64, "at::native::vectorized_elementwise_kernel<4, ...>"),
    (REDUCE, 64, "at::native::reduce_kernel<512, ...>"),
    (REDUCE, 30, "at::native::reduce_kernel<...>"),
    (ANONYMOUS, 90, "at::native::(anonymous namespace)::distribution_elementwise_grid_stride_"
                    "kernel<float, 4>"),
    (ANONYMOUS, 40, "...n_elementwise_grid_stride_kernel<...>"),   # the end: its own name
    ("Memcpy HtoD (Device -> Pinned)", 20, "Memcpy Ht... Pinned)"),
    ("<not a function at all, long>", 24, "<not a func...all, long>"),
])
def test_return_type_and_parameters_go_then_template_arguments(name, width, expected):
    assert short_name(name, width) == expected


@pytest.mark.parametrize("width, expected", [
    (len(MATMUL), MATMUL), (40, "quickstart/matmul.py:16(matmul_naive)"),
    (30, "matmul.py:16(matmul_naive)"), (12, "matmul.py:16(matmul_naive)")])
def test_python_names_lose_directories_never_the_function(width, expected):
    # Was `examples/qui....py:16(...)`: the only useful part cut away.
    assert short_name(MATMUL, width) == expected
    for builtin in ("<built-in method builtins.compile>", "<method 'append' of 'list' objects>"):
        assert short_name(builtin, 12) == builtin        # cProfile's C functions, never cut


@pytest.mark.parametrize("name", [CUTLASS, REDUCE, ANONYMOUS, "x" * 300, "f<" + "a" * 200 + ">(int)",
                                  "operator<<<" + "int, " * 50 + ">(x)", "a b " * 40,
                                  "f(" * 30 + ")" * 29, "<" * 40 + "x"])
@pytest.mark.parametrize("width", [12, 24, 40, 64, 80])
def test_other_names_always_fit(name, width):
    assert len(short_name(name, width)) <= width


def test_distinct_names_stay_distinct_and_readable():
    names = [FILL.format(t="float"), FILL.format(t="int"), CUTLASS,
             CUTLASS.replace("256x128", "128x256"), "gemm<128>(float*)", "gemm<256>(float*)",
             "a/x.py:3(f)", "b/x.py:3(f)"]
    for width in (16, 24, 40, 64):
        short = short_names(names, width)
        assert len(set(short.values())) == len(names), short
        assert all(len(text) <= width for name, text in short.items() if ".py" not in name)
    short = short_names(names, 64)
    assert short[FILL.format(t="float")] == "at::native::vectorized_elementwise_kernel<4, ...> [1]"
    assert short[FILL.format(t="int")] == "at::native::vectorized_elementwise_kernel<4, ...> [2]"
    assert (short["a/x.py:3(f)"], short["b/x.py:3(f)"]) == ("a/x.py:3(f)", "b/x.py:3(f)")
    assert short_names(["src/a/x.py:3(f)", "src/b/x.py:3(f)"], 12) == {
        "src/a/x.py:3(f)": "a/x.py:3(f)", "src/b/x.py:3(f)": "b/x.py:3(f)"}


def test_a_tag_never_repeats_a_name_shown_as_it_is():
    names = ["abcdeXXXXXXXwxyz", "abcdeYYYYYYYwxyz", "abc...yz [1]"]
    assert len(set(short_names(names, 12).values())) == 3


def test_no_width_keeps_every_name_whole():
    assert short_names([CUTLASS, MATMUL], None) == {CUTLASS: CUTLASS, MATMUL: MATMUL}
