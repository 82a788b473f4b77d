"""Image ops: resizes (bilinear, nearest, bicubic), crop and resize,
patches, colour adjustments."""

import numpy as np

from ._base import BF16, BUILDERS, TOLERANCES, _EXACT, _one, raw
from .movement import _i


def _resize(name):
    f = getattr(raw, name)
    grad = name.endswith("Grad")

    def build(c):
        def case(label, x_shape, hw, **attrs):
            if name == "ResizeBilinearGrad":
                orig = c.rand(x_shape[0], hw[0], hw[1], x_shape[3])
                return (label, lambda g, o: f(grads=g, original_image=o, **attrs),
                        [c.rand(*x_shape, dtype=np.float32), orig])
            key = "grads" if grad else "images"
            return (label, lambda x, s: f(**{key: x, "size": s}, **attrs),
                    [c.rand(*x_shape), np.array(hw, np.int32)])
        return [
            case("up", (2, 5, 7, 3), (9, 11)),
            case("half pixel down", (2, 17, 13, 4), (7, 5), half_pixel_centers=True),
            case("half pixel x2", (2, 6, 6, 3), (12, 12), half_pixel_centers=True),
            case("align corners", (1, 4, 5, 2), (7, 3), align_corners=True),
            case("odd", (1, 31, 23, 3), (17, 13)),
        ]
    return build


for _n in ("ResizeBilinear", "ResizeBilinearGrad", "ResizeNearestNeighbor",
           "ResizeNearestNeighborGrad"):
    BUILDERS[_n] = _resize(_n)

BUILDERS["MirrorPad"] = lambda c: _one(lambda x, p: raw.MirrorPad(input=x, paddings=p, mode="REFLECT"),
                                       c.rand(3, 4), _i(c, "Tpaddings", [[1, 1], [2, 1]]))
# Replaces the one-case builder above: both modes, rank 5.
BUILDERS["MirrorPad"] = lambda c: [
    ("reflect", lambda x, p: raw.MirrorPad(input=x, paddings=p, mode="REFLECT"),
     [c.rand(3, 4), _i(c, "Tpaddings", [[1, 1], [2, 1]])]),
    ("symmetric rank5", lambda x, p: raw.MirrorPad(input=x, paddings=p, mode="SYMMETRIC"),
     [c.rand(2, 3, 2, 3, 2), _i(c, "Tpaddings", [[1, 2], [3, 0], [0, 1], [2, 2], [1, 0]])])]
BUILDERS["MirrorPadGrad"] = lambda c: [
    ("reflect", lambda x, p: raw.MirrorPadGrad(input=x, paddings=p, mode="REFLECT"),
     [c.rand(5, 9), _i(c, "Tpaddings", [[1, 1], [2, 3]])]),
    ("symmetric", lambda x, p: raw.MirrorPadGrad(input=x, paddings=p, mode="SYMMETRIC"),
     [c.rand(4, 5, 6), _i(c, "Tpaddings", [[1, 1], [0, 2], [2, 1]])])]
BUILDERS["ReverseV2"] = lambda c: [
    ("axes", lambda x, a: raw.ReverseV2(tensor=x, axis=a), [c.rand(2, 3, 4), _i(c, "Tidx", [0, -1])]),
    ("rank8", lambda x, a: raw.ReverseV2(tensor=x, axis=a),
     [c.rand(2, 1, 2, 3, 2, 1, 2, 3), _i(c, "Tidx", [0, 2, 4, 7])])]
BUILDERS["Roll"] = lambda c: [
    ("two axes", lambda x, s, a: raw.Roll(input=x, shift=s, axis=a),
     [c.rand(3, 4, 5), _i(c, "Tshift", [2, -7]), _i(c, "Taxis", [2, 0])]),
    ("rank6", lambda x, s, a: raw.Roll(input=x, shift=s, axis=a),
     [c.rand(2, 3, 2, 3, 2, 3), _i(c, "Tshift", [1, 1, 1, 2, 1, 100]),
      _i(c, "Taxis", [0, 1, 2, 3, 4, 5])])]
BUILDERS["DepthToSpace"] = lambda c: [
    ("nhwc", lambda x: raw.DepthToSpace(input=x, block_size=2), [c.rand(2, 3, 5, 12)]),
    ("nchw", lambda x: raw.DepthToSpace(input=x, block_size=3, data_format="NCHW"),
     [c.rand(2, 18, 3, 5)],
     {"reference": ("numpy: TensorFlow's CPU kernel takes NHWC only",
                    lambda x: [x.reshape(2, 3, 3, 2, 3, 5).transpose(0, 3, 4, 1, 5, 2).reshape(2, 2, 9, 15)])})]
BUILDERS["SpaceToDepth"] = lambda c: [
    ("nhwc", lambda x: raw.SpaceToDepth(input=x, block_size=2), [c.rand(2, 6, 4, 3)]),
    ("nchw", lambda x: raw.SpaceToDepth(input=x, block_size=3, data_format="NCHW"),
     [c.rand(2, 2, 9, 6)],
     {"reference": ("numpy: TensorFlow's CPU kernel takes NHWC only",
                    lambda x: [x.reshape(2, 2, 3, 3, 2, 3).transpose(0, 3, 5, 1, 2, 4).reshape(2, 18, 3, 2)])})]
BUILDERS["ReverseSequence"] = lambda c: [
    ("seq1", lambda x, l: raw.ReverseSequence(input=x, seq_lengths=l, seq_dim=1, batch_dim=0),
     [c.rand(3, 5, 2), _i(c, "Tlen", [1, 5, 3], np.int64)]),
    ("batch after seq", lambda x, l: raw.ReverseSequence(input=x, seq_lengths=l, seq_dim=0, batch_dim=2),
     [c.rand(4, 3, 3), _i(c, "Tlen", [0, 4, 2], np.int64)])]
BUILDERS["LinSpace"] = lambda c: [
    ("basic", lambda a, b, n: raw.LinSpace(start=a, stop=b, num=n),
     [np.array(0.1, c.T), np.array(0.7, c.T), np.array(7, c.t("Tidx", np.int32))]),
    ("long", lambda a, b, n: raw.LinSpace(start=a, stop=b, num=n),
     [np.array(10, c.T), np.array(-10, c.T), np.array(1031, c.t("Tidx", np.int32))])]
BUILDERS["BroadcastTo"] = lambda c: _one(lambda x, s: raw.BroadcastTo(input=x, shape=s),
                                         c.rand(3, 1), _i(c, "Tidx", [2, 3, 4]))
BUILDERS["Range"] = lambda c: [
    ("up", lambda a, b, d: raw.Range(start=a, limit=b, delta=d),
     [np.array(1, c.t("Tidx")), np.array(11, c.t("Tidx")), np.array(3, c.t("Tidx"))]),
    ("down", lambda a, b, d: raw.Range(start=a, limit=b, delta=d),
     [np.array(5, c.t("Tidx")), np.array(-4, c.t("Tidx")), np.array(-2, c.t("Tidx"))])]


# ---- image ops: bicubic resize, crop and resize, patches, colour ----
# Values are interpolated in float on both sides; OPENCL evaluates the
# bicubic weights in float (TensorFlow's table rounds double ones), sums the
# gradients per pixel in float and rounds once (the CPU rounds each addition
# in the dtype), and converts colours in float (the CPU's half kernels round
# every step): a few float ulps, a few half ulps.
_IMAGE_TOL = {np.float32: dict(rtol=1e-5, atol=1e-5), np.float64: dict(rtol=1e-5, atol=1e-5),
              np.float16: dict(rtol=1e-2, atol=1e-2), BF16: dict(rtol=2e-2, atol=2e-2)}
for _n in ("ResizeBicubic", "ResizeBicubicGrad", "CropAndResize", "CropAndResizeGradImage",
           "RGBToHSV", "HSVToRGB", "AdjustContrastv2", "AdjustSaturation", "AdjustHue"):
    TOLERANCES[_n] = _IMAGE_TOL
# The box gradients sum a whole crop per coordinate, in a tree on OPENCL.
TOLERANCES["CropAndResizeGradBoxes"] = {
    np.float32: dict(rtol=1e-4, atol=1e-4), np.float64: dict(rtol=1e-4, atol=1e-4),
    np.float16: dict(rtol=1e-2, atol=1e-2)}
TOLERANCES["ExtractImagePatches"] = {**_EXACT, np.float64: dict(rtol=0, atol=0)}


def _bicubic(grad):
    def build(c):
        def case(label, x_shape, hw, **attrs):
            if grad:
                orig = c.rand(x_shape[0], hw[0], hw[1], x_shape[3])
                return (label, lambda g, o: raw.ResizeBicubicGrad(grads=g, original_image=o, **attrs),
                        [c.rand(*x_shape, dtype=np.float32), orig])
            return (label, lambda x, s: raw.ResizeBicubic(images=x, size=s, **attrs),
                    [c.rand(*x_shape), np.array(hw, np.int32)])
        return [
            case("up", (2, 5, 7, 3), (9, 11)),
            case("half pixel down", (2, 17, 13, 4), (7, 5), half_pixel_centers=True),
            case("half pixel x2", (2, 6, 6, 3), (12, 12), half_pixel_centers=True),
            case("align corners", (1, 4, 5, 2), (7, 3), align_corners=True),
            case("odd", (1, 31, 23, 3), (17, 13)),
        ]
    return build


BUILDERS["ResizeBicubic"] = _bicubic(False)
BUILDERS["ResizeBicubicGrad"] = _bicubic(True)

_CROP_BOXES = np.array([[0.1, 0.2, 0.8, 0.9], [0.9, 0.7, 0.2, 0.1], [-0.2, -0.1, 1.3, 1.2],
                        [0.3, 0.3, 0.3, 0.6], [0.0, 0.0, 1.0, 1.0], [0.45, 0.55, 0.5, 0.6]],
                       np.float32)
_CROP_IND = np.array([0, 1, 1, 0, 1, 0], np.int32)


def _crop(name):
    def build(c):
        def case(label, img, crop, **attrs):
            n = len(_CROP_BOXES)
            if name == "CropAndResize":
                return (label, lambda x, b, i, s: raw.CropAndResize(
                            image=x, boxes=b, box_ind=i, crop_size=s, **attrs),
                        [c.rand(*img), _CROP_BOXES, _CROP_IND, np.array(crop, np.int32)])
            g = c.rand(n, crop[0], crop[1], img[3], dtype=np.float32)
            if name == "CropAndResizeGradImage":
                return (label, lambda g, b, i, s: raw.CropAndResizeGradImage(
                            grads=g, boxes=b, box_ind=i, image_size=s, T=c.T, **attrs),
                        [g, _CROP_BOXES, _CROP_IND, np.array(img, np.int32)])
            return (label, lambda g, x, b, i: raw.CropAndResizeGradBoxes(
                        grads=g, image=x, boxes=b, box_ind=i, **attrs),
                    [g, c.rand(*img), _CROP_BOXES, _CROP_IND])
        cases = [case("bilinear", (2, 7, 9, 3), (5, 4)),
                 case("1x1 crops", (2, 6, 5, 2), (1, 1)),
                 case("upsampled", (2, 5, 6, 2), (11, 13))]
        if name != "CropAndResizeGradBoxes":
            cases.append(case("nearest", (2, 7, 9, 3), (5, 4), method="nearest"))
        if name == "CropAndResize":
            cases.append(case("extrapolation", (2, 7, 9, 3), (5, 4), extrapolation_value=0.5))
        return cases
    return build


for _n in ("CropAndResize", "CropAndResizeGradImage", "CropAndResizeGradBoxes"):
    BUILDERS[_n] = _crop(_n)


def _patches(c):
    def case(label, shape, k, s, r, padding):
        return (label, lambda x: raw.ExtractImagePatches(
                    images=x, ksizes=[1, *k, 1], strides=[1, *s, 1], rates=[1, *r, 1],
                    padding=padding), [c.rand(*shape)])
    return [case("3x2 valid", (2, 7, 9, 3), (3, 2), (1, 1), (1, 1), "VALID"),
            case("strided same", (2, 7, 9, 3), (3, 2), (2, 3), (1, 1), "SAME"),
            case("rates same", (1, 8, 7, 2), (2, 3), (1, 2), (2, 2), "SAME"),
            case("rates valid", (1, 8, 7, 2), (2, 3), (3, 1), (3, 2), "VALID")]


BUILDERS["ExtractImagePatches"] = _patches


def _colour(name):
    f = getattr(raw, name)
    return lambda c: [
        ("images", lambda x: f(images=x), [np.abs(c.rand(2, 5, 7, 3)) / 2]),
        ("pixels", lambda x: f(images=x), [np.abs(c.rand(11, 3)) / 2]),
        ("edge colours", lambda x: f(images=x),
         [np.array([[0.5, 0.5, 0.5], [0.25, 0.75, 0.75], [0.75, 0.75, 0.25], [0, 0, 0],
                    [1, 1, 1], [1, 0, 0], [0, 1, 0], [0, 0, 1]], c.T)])]


BUILDERS["RGBToHSV"] = _colour("RGBToHSV")
BUILDERS["HSVToRGB"] = _colour("HSVToRGB")

BUILDERS["AdjustContrastv2"] = lambda c: [
    ("images", lambda x, f: raw.AdjustContrastv2(images=x, contrast_factor=f),
     [c.rand(2, 5, 7, 3), np.float32(1.7)]),
    ("rank 3, negative", lambda x, f: raw.AdjustContrastv2(images=x, contrast_factor=f),
     [c.rand(9, 13, 5), np.float32(-0.5)])]
BUILDERS["AdjustSaturation"] = lambda c: [
    ("images", lambda x, s: raw.AdjustSaturation(images=x, scale=s),
     [np.abs(c.rand(2, 5, 7, 3)) / 2, np.float32(0.4)]),
    ("saturating", lambda x, s: raw.AdjustSaturation(images=x, scale=s),
     [np.abs(c.rand(9, 13, 3)) / 2, np.float32(2.5)])]
BUILDERS["AdjustHue"] = lambda c: [
    ("images", lambda x, d: raw.AdjustHue(images=x, delta=d),
     [np.abs(c.rand(2, 5, 7, 3)) / 2, np.float32(0.3)]),
    ("negative", lambda x, d: raw.AdjustHue(images=x, delta=d),
     [np.abs(c.rand(9, 13, 3)) / 2, np.float32(-0.7)])]
