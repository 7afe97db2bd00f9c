"""Short kernel names for table columns: they fit, and they still tell kernels apart."""

from __future__ import annotations

import pytest

from aorta.rendering import short_name, short_names

CUTLASS = ("void cutlass::Kernel2<cutlass_80_simt_sgemm_256x128_8x4_nn_align1>"
           "(cutlass_80_simt_sgemm_256x128_8x4_nn_align1::Params)")
REDUCE = ("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, "
          "at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>"
          "::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, "
          "4>>(at::native::ReduceOp<float>)")


@pytest.mark.parametrize("width,expected", [
    (len(CUTLASS), CUTLASS),
    (len(CUTLASS) - 5, CUTLASS.removeprefix("void ")),
    (70, "cutlass::Kernel2<cutlass_80_simt_sgemm_256x128_8x4_nn_align1>(...)"),
    (50, "cutlass::Kernel2<cutlass_80_s...x4_nn_align1>(...)"),
])
def test_steps_stop_as_soon_as_it_fits(width, expected):
    assert short_name(CUTLASS, width) == expected
    assert len(short_name(CUTLASS, width)) <= width


@pytest.mark.parametrize("name", [CUTLASS, REDUCE, "x" * 300, "f<" + "a" * 200 + ">(int)",
                                  "operator<<<" + "int, " * 50 + ">(x)"])
@pytest.mark.parametrize("width", [12, 24, 40, 64, 80])
def test_always_fits(name, width):
    assert len(short_name(name, width)) <= width


def test_nested_templates_keep_their_ends():
    text = short_name(REDUCE, 64)
    assert text.startswith("at::native::reduce_kernel<512, 1, ")
    assert text.endswith(">>(...)") and "..." in text[:-5]


def test_distinct_names_stay_distinct():
    names = [CUTLASS, CUTLASS.replace("256x128", "128x256"), "gemm<128>(float*)",
             "gemm<256>(float*)", CUTLASS.replace("Params", "Params2")]
    for width in (16, 24, 40, 64):
        short = short_names(names, width)
        assert len(set(short.values())) == len(names)
        assert all(len(text) <= width for text in short.values())
