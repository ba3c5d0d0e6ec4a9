"""The reference Pad, organised by mode; each edge case named (after numpy's test_arraypad)."""
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from padconf.core.dtypes import ALL_DTYPES, as_array, bit_equal, numpy_dtype
from padconf.core.errors import PadError, TooLargeToCheck
from padconf.spec.reference import INTERPRETATIONS, MODES, pad

X34 = np.arange(1, 13).reshape(3, 4)


def pads_of(widths):
    return [b for b, _ in widths] + [e for _, e in widths]


@st.composite
def array_and_widths(draw, min_side=0, max_pad=7, min_pad=0):
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=min_side, max_side=5))
    data = draw(hnp.arrays(np.int32, shape, elements=st.integers(-100, 100)))
    widths = [tuple(draw(st.integers(min_pad, max_pad)) for _ in range(2)) for _ in shape]
    return data, widths


class TestAgainstNumpy:
    """Where the semantics coincide (non-negative pads), the reference is numpy.pad."""

    @pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "symmetric", "wrap"])
    @given(case=array_and_widths(min_side=1))
    def test_nonnegative_pads(self, mode, case):
        data, widths = case
        expected = np.pad(data, widths, mode=mode) if data.ndim else data
        got = pad(data, pads_of(widths), mode)
        assert got.dtype == expected.dtype and np.array_equal(got, expected)

    @given(case=array_and_widths(min_side=0), value=st.integers(-5, 5))
    def test_constant_value_and_zero_size_dims(self, case, value):
        data, widths = case
        expected = np.pad(data, widths, constant_values=value) if data.ndim else data
        assert np.array_equal(pad(data, pads_of(widths), "constant", np.int32(value)), expected)


class TestNegativePads:
    @pytest.mark.parametrize("mode", MODES)
    @given(case=array_and_widths(min_side=4, min_pad=-2, max_pad=0))
    def test_negative_pads_are_slicing(self, mode, case):
        data, widths = case
        sl = tuple(slice(-b, n + e) for (b, e), n in zip(widths, data.shape))
        assert np.array_equal(pad(data, pads_of(widths), mode), data[sl])

    @pytest.mark.parametrize("mode", MODES)
    @given(case=array_and_widths(min_side=1))
    def test_pad_then_crop_restores(self, mode, case):
        data, widths = case
        padded = pad(data, pads_of(widths), mode)
        assert np.array_equal(pad(padded, [-p for p in pads_of(widths)], mode), data)

    def test_crop_to_exactly_zero(self):
        assert pad(X34, [0, -4, 0, 0]).shape == (3, 0)

    def test_crop_beyond_dim_rejected_by_default(self):
        with pytest.raises(PadError, match="crop more"):
            pad(X34, [0, -3, 0, -2])

    def test_crop_beyond_dim_clamps_on_request(self):
        assert pad(X34, [0, -3, 0, -2], crop_beyond_dim="clamp_to_zero").shape == (3, 0)


class TestMixedSignPads:
    """OpenVINO Pad-12's mixed-pads example: pads_begin [2, -1], pads_end [-1, 3]."""

    def test_reflect_original_coordinates_matches_openvino_example(self):
        expected = [[10, 11, 12, 11, 10, 9], [6, 7, 8, 7, 6, 5], [2, 3, 4, 3, 2, 1], [6, 7, 8, 7, 6, 5]]
        assert pad(X34, [2, -1, -1, 3], "reflect").tolist() == expected

    def test_reflect_crop_first_differs(self):
        # crop first leaves rows [1..4], [5..8]; reflecting two rows above them gives r0, r1, r0, r1
        out = pad(X34, [2, -1, -1, 3], "reflect", mixed_sign_pads="crop_first")
        assert out[:, 0].tolist() == [2, 6, 2, 6]

    def test_wrap_interpretations_differ(self):
        a = pad(X34, [2, 0, -1, 0], "wrap")
        b = pad(X34, [2, 0, -1, 0], "wrap", mixed_sign_pads="crop_first")
        assert a[:, 0].tolist() == [5, 9, 1, 5] and b[:, 0].tolist() == [1, 5, 1, 5]

    def test_crop_everything_then_pad_from_original(self):
        assert pad(np.array([1, 2]), [3, -2], "edge").tolist() == [1, 1, 1]


class TestReflect:
    def test_onnx_example_2_pad_equal_to_dim(self):
        data = np.array([[1.0, 1.2], [2.3, 3.4], [4.5, 5.7]], np.float32)
        assert pad(data, [0, 2, 0, 0], "reflect")[0].tolist() == pytest.approx([1.0, 1.2, 1.0, 1.2])

    def test_pad_beyond_dim_rejected_on_request(self):
        with pytest.raises(PadError, match="mirror"):
            pad(np.arange(3), [3, 0], "reflect", mirror_beyond_dim="reject")
        assert pad(np.arange(3), [2, 0], "reflect", mirror_beyond_dim="reject").tolist() == [2, 1, 0, 1, 2]

    def test_dim_of_one_repeats_the_element(self):
        assert pad(np.array([7]), [2, 3], "reflect").tolist() == [7] * 6

    def test_symmetric_pad_equal_to_dim_is_allowed(self):
        assert pad(np.arange(3), [3, 0], "symmetric", mirror_beyond_dim="reject").tolist() == [2, 1, 0, 0, 1, 2]


class TestEmptyAxis:
    @pytest.mark.parametrize("mode", ["edge", "reflect", "symmetric", "wrap"])
    def test_padding_an_empty_axis_rejected_by_default(self, mode):
        with pytest.raises(PadError, match="empty axis"):
            pad(np.zeros((0, 3)), [1, 0, 0, 0], mode)

    def test_constant_fill_interpretation(self):
        out = pad(np.zeros((0, 2), np.int8), [1, 0, 0, 0], "edge", empty_axis_nonconstant="constant_fill")
        assert out.shape == (1, 2) and out.tolist() == [[0, 0]]

    @pytest.mark.parametrize("mode", MODES)
    def test_unpadded_empty_axis_is_fine(self, mode):
        assert pad(np.zeros((0, 3)), [0, 1, 0, 1], mode).shape == (0, 5)

    def test_constant_pads_an_empty_axis(self):
        assert pad(np.zeros((0,), np.float32), [2, 1], "constant", np.float32(5)).tolist() == [5, 5, 5]


class TestAxes:
    def test_negative_axes(self):
        assert np.array_equal(pad(X34, [1, 2], axes=[-1]), np.pad(X34, ((0, 0), (1, 2))))

    def test_axes_subset_and_order(self):
        assert np.array_equal(pad(X34, [1, 0, 2, 3], axes=[1, 0]), np.pad(X34, ((0, 3), (1, 2))))

    def test_empty_axes_is_identity(self):
        assert np.array_equal(pad(X34, [], axes=[]), X34)

    def test_out_of_range_axis(self):
        with pytest.raises(PadError, match="outside"):
            pad(X34, [1, 1], axes=[2])

    def test_repeated_axes(self):
        with pytest.raises(PadError, match="repeated"):
            pad(X34, [1, 2, 0, 0], axes=[0, 0])
        assert pad(X34, [1, 2, 0, 0], axes=[0, 0], repeated_axes="last_wins").shape == (5, 4)
        assert pad(X34, [1, 2, 0, 0], axes=[0, 0], repeated_axes="accumulate").shape == (6, 4)


class TestSpecSpecificInterpretations:
    """The undefined points of single versions (ONNX Pad-1/2, OpenVINO) live here too, so that
    classification only ever asks the reference."""

    def test_negative_pads(self):
        assert pad(X34, [-1, 0, 0, 0]).shape == (2, 4)
        with pytest.raises(PadError, match="negative"):
            pad(X34, [-1, 0, 0, 0], negative_pads="reject")
        assert pad(X34, [1, 0, 0, 0], negative_pads="reject").shape == (4, 4)

    def test_pad_value_in_non_constant_mode(self):
        value = np.int64(9)
        assert pad(X34, [0, 1, 0, 0], "edge", value).tolist() == pad(X34, [0, 1, 0, 0], "edge").tolist()
        with pytest.raises(PadError, match="constant value"):
            pad(X34, [0, 1, 0, 0], "edge", value, pad_value_in_non_constant_mode="reject")
        assert pad(X34, [0, 1, 0, 0], "constant", value, pad_value_in_non_constant_mode="reject")[0, 0] == 9

    def test_float32_constant_rounds_a_double_value(self):
        got = pad(np.array([1.0]), [1, 0], "constant", np.float64(0.1), float32_constant=True)
        assert got[0] == np.float64(np.float32(0.1)) != 0.1
        assert pad(np.array([1.0]), [1, 0], "constant", np.float64(0.1))[0] == 0.1

    def test_float32_constant_of_complex_data_keeps_the_real_part_as_the_model_writes_it(self):
        """Pad-1/2's float attribute holds no imaginary part: the reference pads with the real
        part, as cases.onnx_model writes it, and numpy's ComplexWarning never reaches a stream."""
        data, value = np.array([1 + 1j], np.complex64), np.complex128(2.5 + 3j)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = pad(data, [1, 0], "constant", value, float32_constant=True)
        assert got.tolist() == [2.5 + 0j, 1 + 1j]


class TestInvalidInput:
    @pytest.mark.parametrize("pads", [[1], [1, 2, 3]])
    def test_wrong_pads_length(self, pads):
        with pytest.raises(PadError, match="pads has"):
            pad(X34, pads)

    def test_unknown_mode(self):
        with pytest.raises(PadError, match="mode"):
            pad(X34, [0, 0, 0, 0], "mirror")

    def test_unknown_interpretation(self):
        with pytest.raises(PadError, match="interpretations"):
            pad(X34, [0, 0, 0, 0], flip="yes")
        with pytest.raises(PadError, match="not one of"):
            pad(X34, [0, 0, 0, 0], repeated_axes="sometimes")

    def test_output_cap_refused_before_allocating(self):
        with pytest.raises(PadError, match="more than"):
            pad(np.zeros((2, 2), np.uint8), [10**6, 10**6, 10**6, 10**6])

    def test_errors_are_one_line(self):
        with pytest.raises(PadError) as info:
            pad(X34, [1])
        assert "\n" not in str(info.value)


class TestDtypes:
    @pytest.mark.parametrize("dtype", ALL_DTYPES)
    @pytest.mark.parametrize("mode", MODES)
    def test_output_dtype_is_input_dtype(self, dtype, mode):
        values = [["a", "b"], ["c", "d"]] if dtype == "string" else [[1, 0], [1, 1]]
        data = as_array(values, dtype)
        out = pad(data, [1, 1, 1, 1], mode)
        assert out.dtype == numpy_dtype(dtype) and out.shape == (4, 4)
        assert bit_equal(out[1:3, 1:3], data)

    def test_string_default_constant_is_empty_string(self):
        out = pad(as_array(["x"], "string"), [1, 1])
        assert out.tolist() == ["", "x", ""]

    def test_bool_default_constant_is_false(self):
        assert pad(np.array([True]), [1, 0]).tolist() == [False, True]

    def test_rank_zero(self):
        assert pad(np.float32(3), []).shape == ()

    def test_signed_zero_and_nan_constants_kept_bit_exact(self):
        out = pad(np.array([1.0], np.float32), [1, 1], "constant", np.float32(-0.0))
        assert np.signbit(out[0]) and np.signbit(out[2])
        nan = np.array(np.nan, np.float32)
        assert np.isnan(pad(np.array([1.0], np.float32), [1, 0], "constant", nan)[0])

    def test_interpretations_are_documented(self):
        import padconf.spec.reference as ref
        for name in INTERPRETATIONS:
            assert name in ref.__doc__


class TestWidePads:
    def test_pads_beyond_32_bits_cancel_to_constants(self):
        # 2**32 + 1 constants, then [1, 2, 3], then 2**32 removed from the end: 4 constants remain
        assert pad(np.float32([1, 2, 3]), [2**32 + 1, -(2**32)]).tolist() == [0, 0, 0, 0]

    def test_dimension_beyond_int64_is_too_large_to_check(self):
        with pytest.raises(TooLargeToCheck, match="int64"):
            pad(np.zeros((0, 3)), [0, 2**62, 0, 2**62])


class TestMirrorBoundScope:
    def test_reflect_pad_zero_on_empty_axis_adds_nothing(self):
        assert pad(np.zeros((2, 0)), [1, 0, 1, 0], "reflect", mirror_beyond_dim="reject").shape == (4, 0)

    def test_reflect_pad_zero_on_empty_axis_rejected_when_the_bound_holds_for_every_pad(self):
        with pytest.raises(PadError, match="exceeds"):
            pad(np.zeros((2, 0)), [1, 0, 1, 0], "reflect", mirror_beyond_dim="reject", mirror_bound_every_pad=True)
