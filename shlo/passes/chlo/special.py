"""The special functions: erf, erfc (Cephes for f64, Eigen's rational approximation for f32),
erf_inv (Giles' polynomials), bessel_i1e (Cephes' Chebyshev series), lgamma and digamma
(Lanczos, g = 7, n = 9, with Euler's reflection), zeta (Hurwitz, Euler-Maclaurin, after
Johansson) and polygamma (through zeta and lgamma). Narrow floats compute in f32 and convert
back. Constants and op order are upstream's (ChloLegalizeToStablehlo.cpp)."""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from ...ir import Operation, Value
from ._builder import Builder, NotLowered, lowering, tensor

# --- polynomials ---------------------------------------------------------------------------------


def polynomial(b: Builder, x: Value, coefficients: Sequence[float]) -> Value:
    """Horner's rule, highest degree first: ((c0 * x + c1) * x + c2) ..."""
    if not coefficients:
        return b.like(0.0, x)
    poly = b.like(coefficients[0], x)
    for c in coefficients[1:]:
        poly = b.mul(poly, x)
        poly = b.add(poly, b.like(c, x))
    return poly


def chebyshev(b: Builder, x: Value, coefficients: Sequence[float]) -> Value:
    """Clenshaw's recurrence for a Chebyshev series (Cephes' chbevl), halved."""
    b0, b1, b2 = b.like(0.0, x), b.like(0.0, x), b.like(0.0, x)
    for c in coefficients:
        b2, b1 = b1, b0
        b0 = b.mul(x, b1)
        b0 = b.sub(b0, b2)
        b0 = b.add(b0, b.like(c, x))
    return b.mul(b.sub(b0, b2), b.like(0.5, x))


def _f32(values: Sequence[float]) -> list[float]:
    """C++ float literals: each rounded to f32."""
    return [float(np.float32(v)) for v in values]


def _is(v: Value, name: str) -> bool:
    return tensor(v).element_type.name == name


def _float_only(v: Value) -> None:
    if tensor(v).element_type.name not in ("f64", "f32", "f16", "bf16"):
        raise NotLowered("only f64, f32, f16 and bf16 are supported")


# --- bessel_i1e ----------------------------------------------------------------------------------

_I1E_A64 = [
    2.77791411276104639959E-18, -2.11142121435816608115E-17, 1.55363195773620046921E-16,
    -1.10559694773538630805E-15, 7.60068429473540693410E-15, -5.04218550472791168711E-14,
    3.22379336594557470981E-13, -1.98397439776494371520E-12, 1.17361862988909016308E-11,
    -6.66348972350202774223E-11, 3.62559028155211703701E-10, -1.88724975172282928790E-9,
    9.38153738649577178388E-9, -4.44505912879632808065E-8, 2.00329475355213526229E-7,
    -8.56872026469545474066E-7, 3.47025130813767847674E-6, -1.32731636560394358279E-5,
    4.78156510755005422638E-5, -1.61760815825896745588E-4, 5.12285956168575772895E-4,
    -1.51357245063125314899E-3, 4.15642294431288815669E-3, -1.05640848946261981558E-2,
    2.47264490306265168283E-2, -5.29459812080949914269E-2, 1.02643658689847095384E-1,
    -1.76416518357834055153E-1, 2.52587186443633654823E-1]
_I1E_B64 = [
    7.51729631084210481353E-18, 4.41434832307170791151E-18, -4.65030536848935832153E-17,
    -3.20952592199342395980E-17, 2.96262899764595013876E-16, 3.30820231092092828324E-16,
    -1.88035477551078244854E-15, -3.81440307243700780478E-15, 1.04202769841288027642E-14,
    4.27244001671195135429E-14, -2.10154184277266431302E-14, -4.08355111109219731823E-13,
    -7.19855177624590851209E-13, 2.03562854414708950722E-12, 1.41258074366137813316E-11,
    3.25260358301548823856E-11, -1.89749581235054123450E-11, -5.58974346219658380687E-10,
    -3.83538038596423702205E-9, -2.63146884688951950684E-8, -2.51223623787020892529E-7,
    -3.88256480887769039346E-6, -1.10588938762623716291E-4, -9.76109749136146840777E-3,
    7.78576235018280120474E-1]
_I1E_A32 = _f32(_I1E_A64[12:])
_I1E_B32 = _f32(_I1E_B64[18:])


def _bessel_i1e(b: Builder, x: Value) -> Value:
    a, bb = (_I1E_A64, _I1E_B64) if _is(x, "f64") else (_I1E_A32, _I1E_B32)
    z = b.op("abs", x)
    half, two = b.like(0.5, x), b.like(2.0, x)
    thirty_two, eight = b.like(32.0, x), b.like(8.0, x)
    tmp = b.sub(b.mul(half, z), two)
    le8 = b.mul(z, chebyshev(b, tmp, a))
    tmp = b.sub(b.div(thirty_two, z), two)
    gt8 = b.div(chebyshev(b, tmp, bb), b.op("sqrt", z))
    is_le8 = b.cmp("LE", z, eight)
    select = b.select(is_le8, le8, gt8)
    return b.mul(b.op("sign", x), select)


@lowering("chlo.bessel_i1e")
def _lower_bessel_i1e(b: Builder, op: Operation, xs: Sequence[Value]) -> Sequence[Value]:
    _float_only(xs[0])
    if _is(xs[0], "f64"):
        return [_bessel_i1e(b, xs[0])]
    return [b.with_upcast(xs, lambda x: _bessel_i1e(b, x))]


# --- erf, erfc -----------------------------------------------------------------------------------

_ERFC_P64 = [2.46196981473530512524E-10, 5.64189564831068821977E-1, 7.46321056442269912687E0,
             4.86371970985681366614E1, 1.96520832956077098242E2, 5.26445194995477358631E2,
             9.34528527171957607540E2, 1.02755188689515710272E3, 5.57535335369399327526E2]
_ERFC_Q64 = [1.00000000000000000000E0, 1.32281951154744992508E1, 8.67072140885989742329E1,
             3.54937778887819891062E2, 9.75708501743205489753E2, 1.82390916687909736289E3,
             2.24633760818710981792E3, 1.65666309194161350182E3, 5.57535340817727675546E2]
_ERFC_R64 = [5.64189583547755073984E-1, 1.27536670759978104416E0, 5.01905042251180477414E0,
             6.16021097993053585195E0, 7.40974269950448939160E0, 2.97886665372100240670E0]
_ERFC_S64 = [1.00000000000000000000E0, 2.26052863220117276590E0, 9.39603524938001434673E0,
             1.20489539808096656605E1, 1.70814450747565897222E1, 9.60896809063285878198E0,
             3.36907645100081516050E0]
_ERF_T64 = [9.60497373987051638749E0, 9.00260197203842689217E1, 2.23200534594684319226E3,
            7.00332514112805075473E3, 5.55923013010394962768E4]
_ERF_U64 = [1.00000000000000000000E0, 3.35617141647503099647E1, 5.21357949780152679795E2,
            4.59432382970980127987E3, 2.26290000613890934246E4, 4.92673942608635921086E4]
_ERFC_P32 = _f32([+2.326819970068386E-2, -1.387039388740657E-1, +3.687424674597105E-1,
                  -5.824733027278666E-1, +6.210004621745983E-1, -4.944515323274145E-1,
                  +3.404879937665872E-1, -2.741127028184656E-1, +5.638259427386472E-1])
_ERFC_R32 = _f32([-1.047766399936249E+1, +1.297719955372516E+1, -7.495518717768503E+0,
                  +2.921019019210786E+0, -1.015265279202700E+0, +4.218463358204948E-1,
                  -2.820767439740514E-1, +5.641895067754075E-1])
_ERF_T32 = _f32([+7.853861353153693E-5, -8.010193625184903E-4, +5.188327685732524E-3,
                 -2.685381193529856E-2, +1.128358514861418E-1, -3.761262582423300E-1,
                 +1.128379165726710E+0])
_ERF_ALPHA32 = _f32([-2.72614225801306e-10, 2.77068142495902e-08, -2.10102402082508e-06,
                     -5.69250639462346e-05, -7.34990630326855e-04, -2.95459980854025e-03,
                     -1.60960333262415e-02])
_ERF_BETA32 = _f32([-1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03,
                    -7.37332916720468e-03, -1.42647390514189e-02])


def _erfc_ge_one_f64(b: Builder, x: Value) -> Value:
    """erfc for |x| >= 1 (Cephes): exp(-x^2) P(|x|)/Q(|x|) below 8, R/S above."""
    z = b.op("negate", b.mul(x, x))
    exp_z = b.op("exponential", z)
    ax = b.op("abs", x)
    approx18 = b.div(b.mul(exp_z, polynomial(b, ax, _ERFC_P64)), polynomial(b, ax, _ERFC_Q64))
    approx8 = b.div(b.mul(exp_z, polynomial(b, ax, _ERFC_R64)), polynomial(b, ax, _ERFC_S64))
    lt8 = b.cmp("LT", ax, b.like(8.0, x))
    approx = b.select(lt8, approx18, approx8)
    underflow = b.cmp("LT", z, b.like(-7.09782712893383996843E2, x))
    zero = b.like(0.0, x)
    clamped = b.select(underflow, zero, approx)
    neg = b.cmp("LT", x, zero)
    return b.select(neg, b.sub(b.like(2.0, x), clamped), clamped)


def _erf_le_one_f64(b: Builder, x: Value) -> Value:
    xx = b.mul(x, x)
    return b.div(b.mul(x, polynomial(b, xx, _ERF_T64)), polynomial(b, xx, _ERF_U64))


def _erf_f64(b: Builder, x: Value) -> Value:
    small = _erf_le_one_f64(b, x)
    one = b.like(1.0, x)
    large = b.sub(one, _erfc_ge_one_f64(b, x))
    return b.select(b.cmp("LT", b.op("abs", x), one), small, large)


def _erfc_f64(b: Builder, x: Value) -> Value:
    large = _erfc_ge_one_f64(b, x)
    one = b.like(1.0, x)
    small = b.sub(one, _erf_le_one_f64(b, x))
    return b.select(b.cmp("LT", b.op("abs", x), one), small, large)


def _erfc_ge_one_f32(b: Builder, x: Value) -> Value:
    xx = b.mul(x, x)
    z = b.op("negate", xx)
    ax = b.op("abs", x)
    one = b.like(1.0, x)
    inv_xx = b.div(one, xx)
    exp_z = b.op("exponential", z)
    scale = b.mul(exp_z, b.div(one, ax))
    two = b.like(2.0, x)
    lt2 = b.cmp("LT", ax, two)
    p = polynomial(b, inv_xx, _ERFC_P32)
    r = polynomial(b, inv_xx, _ERFC_R32)
    approx = b.mul(scale, b.select(lt2, p, r))
    underflow = b.cmp("LT", z, b.like(-88.72283905206835, x))
    zero = b.like(0.0, x)
    clamped = b.select(underflow, zero, approx)
    neg = b.cmp("LT", x, zero)
    return b.select(neg, b.sub(two, clamped), clamped)


def _erf_le_one_f32(b: Builder, x: Value) -> Value:
    return b.mul(x, polynomial(b, b.mul(x, x), _ERF_T32))


def _erf_f32(b: Builder, x: Value) -> Value:
    """Eigen's rational approximation on [-4, 4], clamped to [-1, 1]."""
    x = b.op("clamp", b.like(-4.0, x), x, b.like(4.0, x))
    xx = b.mul(x, x)
    alpha = polynomial(b, xx, _ERF_ALPHA32)
    beta = polynomial(b, xx, _ERF_BETA32)
    erf = b.div(b.mul(x, alpha), beta)
    return b.op("clamp", b.like(-1.0, x), erf, b.like(1.0, x))


def _erfc_f32(b: Builder, x: Value) -> Value:
    large = _erfc_ge_one_f32(b, x)
    one = b.like(1.0, x)
    small = b.sub(one, _erf_le_one_f32(b, x))
    return b.select(b.cmp("LT", b.op("abs", x), one), small, large)


@lowering("chlo.erf")
def _lower_erf(b: Builder, op: Operation, xs: Sequence[Value]) -> Sequence[Value]:
    _float_only(xs[0])
    if _is(xs[0], "f64"):
        return [_erf_f64(b, xs[0])]
    return [b.with_upcast(xs, lambda x: _erf_f32(b, x))]


@lowering("chlo.erfc")
def _lower_erfc(b: Builder, op: Operation, xs: Sequence[Value]) -> Sequence[Value]:
    _float_only(xs[0])
    if _is(xs[0], "f64"):
        return [_erfc_f64(b, xs[0])]
    return [b.with_upcast(xs, lambda x: _erfc_f32(b, x))]


# --- erf_inv -------------------------------------------------------------------------------------

_ERFINV_LT5 = _f32([2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                    0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941])
_ERFINV_GT5 = _f32([-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                    0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682])
_ERFINV_LT625 = [
    -3.6444120640178196996e-21, -1.685059138182016589e-19, 1.2858480715256400167e-18,
    1.115787767802518096e-17, -1.333171662854620906e-16, 2.0972767875968561637e-17,
    6.6376381343583238325e-15, -4.0545662729752068639e-14, -8.1519341976054721522e-14,
    2.6335093153082322977e-12, -1.2975133253453532498e-11, -5.4154120542946279317e-11,
    1.051212273321532285e-09, -4.1126339803469836976e-09, -2.9070369957882005086e-08,
    4.2347877827932403518e-07, -1.3654692000834678645e-06, -1.3882523362786468719e-05,
    0.0001867342080340571352, -0.00074070253416626697512, -0.0060336708714301490533,
    0.24015818242558961693, 1.6536545626831027356]
_ERFINV_LT16 = [
    2.2137376921775787049e-09, 9.0756561938885390979e-08, -2.7517406297064545428e-07,
    1.8239629214389227755e-08, 1.5027403968909827627e-06, -4.013867526981545969e-06,
    2.9234449089955446044e-06, 1.2475304481671778723e-05, -4.7318229009055733981e-05,
    6.8284851459573175448e-05, 2.4031110387097893999e-05, -0.0003550375203628474796,
    0.00095328937973738049703, -0.0016882755560235047313, 0.0024914420961078508066,
    -0.0037512085075692412107, 0.005370914553590063617, 1.0052589676941592334,
    3.0838856104922207635]
_ERFINV_GT16 = [
    -2.7109920616438573243e-11, -2.5556418169965252055e-10, 1.5076572693500548083e-09,
    -3.7894654401267369937e-09, 7.6157012080783393804e-09, -1.4960026627149240478e-08,
    2.9147953450901080826e-08, -6.7711997758452339498e-08, 2.2900482228026654717e-07,
    -9.9298272942317002539e-07, 4.5260625972231537039e-06, -1.9681778105531670567e-05,
    7.5995277030017761139e-05, -0.00021503011930044477347, -0.00013871931833623122026,
    1.0103004648645343977, 4.8499064014085844221]


def _erf_inv_w(b: Builder, x: Value) -> Value:
    """w = -log1p(-x^2)."""
    return b.op("negate", b.op("log_plus_one", b.mul(x, b.op("negate", x))))


def _erf_inv_edges(b: Builder, x: Value, p: Value) -> Value:
    result = b.mul(p, x)
    at_one = b.cmp("EQ", b.op("abs", x), b.like(1, x))
    return b.select(at_one, b.mul(x, b.like(math.inf, x)), result)


def _erf_inv32(b: Builder, x: Value) -> Value:
    w = _erf_inv_w(b, x)
    lt = b.cmp("LT", w, b.like(5.0, x))

    def coefficient(i: int) -> Value:
        return b.select(lt, b.like(_ERFINV_LT5[i], x), b.like(_ERFINV_GT5[i], x))

    w = b.select(lt, b.sub(w, b.like(2.5, x)), b.sub(b.op("sqrt", w), b.like(3.0, x)))
    p = coefficient(0)
    for i in range(1, 9):
        p = b.add(coefficient(i), b.mul(p, w))
    return _erf_inv_edges(b, x, p)


def _erf_inv64(b: Builder, x: Value) -> Value:
    w = _erf_inv_w(b, x)
    lt625 = b.cmp("LT", w, b.like(6.25, x))
    lt16 = b.cmp("LT", w, b.like(16, x))

    def coefficient(i: int) -> Value:
        c = b.like(_ERFINV_LT625[i], x)
        if i < 19:
            c = b.select(lt625, c, b.like(_ERFINV_LT16[i], x))
        if i < 17:
            c = b.select(lt16, c, b.like(_ERFINV_GT16[i], x))
        return c

    sqrt_w = b.op("sqrt", w)
    w_minus = b.sub(w, b.like(3.125, x))
    shift = b.select(lt16, b.like(3.25, w), b.like(5.0, w))
    w = b.select(lt625, w_minus, b.sub(sqrt_w, shift))
    p = coefficient(0)
    for i in range(1, 17):
        p = b.add(coefficient(i), b.mul(p, w))
    for i in range(17, 19):
        p = b.select(lt16, b.add(coefficient(i), b.mul(p, w)), p)
    for i in range(19, 23):
        p = b.select(lt625, b.add(coefficient(i), b.mul(p, w)), p)
    return _erf_inv_edges(b, x, p)


@lowering("chlo.erf_inv")
def _lower_erf_inv(b: Builder, op: Operation, xs: Sequence[Value]) -> Sequence[Value]:
    if tensor(op.results[0]).element_type.name == "f64":
        return [_erf_inv64(b, xs[0])]
    return [b.with_upcast(xs, lambda x: _erf_inv32(b, x))]


# --- lgamma, digamma -----------------------------------------------------------------------------

LANCZOS_GAMMA = 7.0
LANCZOS_BASE = 0.99999999999980993227684700473478
LANCZOS = [676.520368121885098567009190444019, -1259.13921672240287047156078755283,
           771.3234287776530788486528258894, -176.61502916214059906584551354,
           12.507343278686904814458936853, -0.13857109526572011689554707,
           9.984369578019570859563e-6, 1.50563273514931155834e-7]


def _reflect(b: Builder, x: Value) -> tuple[Value, Value, Value, Value]:
    """(half, need_to_reflect, one, z) with z = -x if x < 1/2 else x - 1."""
    half = b.like(0.5, x)
    reflect = b.cmp("LT", x, half)
    neg_x = b.op("negate", x)
    one = b.like(1, x)
    z = b.select(reflect, neg_x, b.sub(x, one))
    return half, reflect, one, z


def _log_t(b: Builder, x: Value, z: Value) -> tuple[Value, Value]:
    """(t, log t) with t = z + g + 1/2, log t = log(g + 1/2) + log1p(z / (g + 1/2))."""
    lanczos_half = b.like(LANCZOS_GAMMA + 0.5, x)
    t = b.add(lanczos_half, z)
    log_term = b.like(math.log(LANCZOS_GAMMA + 0.5), x)
    log1p_term = b.op("log_plus_one", b.div(z, lanczos_half))
    return t, b.add(log_term, log1p_term)


def materialize_lgamma(b: Builder, x: Value) -> Value:
    half, reflect, one, z = _reflect(b, x)
    a = b.like(LANCZOS_BASE, x)
    for i, c in enumerate(LANCZOS):
        coeff = b.like(c, x)
        index = b.like(i + 1, x)
        a = b.add(a, b.div(coeff, b.add(z, index)))
    t, log_t = _log_t(b, x, z)
    t_div_log_t = b.div(t, log_t)
    r = b.mul(b.sub(b.add(z, half), t_div_log_t), log_t)
    log_a = b.op("log", a)
    lgamma = b.add(b.add(b.like((math.log(2) + math.log(math.pi)) / 2, x), r), log_a)
    ax = b.op("abs", x)
    abs_frac = b.sub(ax, b.op("floor", ax))
    reduce = b.cmp("LT", half, abs_frac)
    abs_frac = b.select(reduce, b.sub(one, abs_frac), abs_frac)
    denom = b.op("log", b.op("sine", b.mul(b.like(math.pi, x), abs_frac)))
    reflection = b.sub(b.sub(b.like(math.log(math.pi), x), denom), lgamma)
    finite = b.op("is_finite", denom)
    reflection = b.select(finite, reflection, b.op("negate", denom))
    lgamma = b.select(reflect, reflection, lgamma)
    is_inf = b.chlo1("is_inf", x)
    return b.select(is_inf, b.like(math.inf, x), lgamma)


def materialize_digamma(b: Builder, x: Value) -> Value:
    _, reflect, _, z = _reflect(b, x)
    zero = b.like(0.0, x)
    a = b.like(LANCZOS_BASE, x)
    a_prime = zero
    for i, c in enumerate(LANCZOS):
        coeff = b.like(c, x)
        index = b.like(i + 1, x)
        zt = b.add(z, index)
        a_prime = b.sub(a_prime, b.div(coeff, b.mul(zt, zt)))
        a = b.add(a, b.div(coeff, zt))
    t, log_t = _log_t(b, x, z)
    a_prime_div_a = b.div(a_prime, a)
    gamma_div_t = b.div(b.like(LANCZOS_GAMMA, x), t)
    digamma = b.sub(b.add(log_t, a_prime_div_a), gamma_div_t)
    reduced = b.add(x, b.op("abs", b.op("floor", b.add(x, b.like(0.5, x)))))
    pi = b.like(math.pi, x)
    pi_x = b.mul(pi, reduced)
    cos, sin = b.op("cosine", pi_x), b.op("sine", pi_x)
    reflection = b.sub(digamma, b.div(b.mul(pi, cos), sin))
    digamma = b.select(reflect, reflection, digamma)
    le_zero = b.cmp("LE", x, zero)
    is_int = b.cmp("EQ", x, b.op("floor", x))
    pole = b.op("and", le_zero, is_int)
    return b.select(pole, b.like(math.nan, x), digamma)


@lowering("chlo.lgamma")
def _lower_lgamma(b: Builder, op: Operation, xs: Sequence[Value]) -> Sequence[Value]:
    return [b.with_upcast(xs, lambda x: materialize_lgamma(b, x))]


@lowering("chlo.digamma")
def _lower_digamma(b: Builder, op: Operation, xs: Sequence[Value]) -> Sequence[Value]:
    return [b.with_upcast(xs, lambda x: materialize_digamma(b, x))]


# --- zeta, polygamma -----------------------------------------------------------------------------

_ZETA = [-7.1661652561756670113e18, 1.8152105401943546773e17, -4.5979787224074726105e15,
         1.1646782814350067249e14, -2.950130727918164224e12, 7.47242496e10,
         -1.8924375803183791606e9, 47900160.0, -1209600.0, 30240.0, -720.0, 12.0]


def materialize_zeta(b: Builder, x: Value, q: Value) -> Value:
    """Hurwitz zeta(x, q): 9 terms of the series, then a 12-term Euler-Maclaurin tail."""
    terms, iters = 12, 9
    zero, one = b.like(0.0, q), b.like(1.0, q)
    acc, q_neg_power = q, zero
    neg_x = b.op("negate", x)
    power_sum = b.op("power", q, neg_x)
    for _ in range(iters):
        acc = b.add(acc, one)
        q_neg_power = b.op("power", acc, neg_x)
        power_sum = b.add(power_sum, q_neg_power)
    acc = b.add(acc, one)
    q_neg_power = b.op("power", acc, neg_x)
    one_like_x = b.like(1.0, x)
    correction = b.div(b.mul(q_neg_power, acc), b.sub(x, one_like_x))
    rsqrt_acc = b.div(one, b.mul(acc, acc))
    horner_sum = zero
    for i in range(terms - 1):
        lhs = b.add(x, b.like(2 * terms - 1 - 1 - 2 * i, x))
        rhs = b.add(x, b.like(2 * terms - 1 - 2 - 2 * i, x))
        product = b.mul(lhs, rhs)
        horner_sum = b.mul(product, b.mul(rsqrt_acc, b.add(horner_sum,
                                                           b.like(1.0 / _ZETA[i], acc))))
    half = b.like(0.5, q_neg_power)
    x_div_acc = b.div(x, acc)
    tail = b.mul(q_neg_power, b.add(half, b.mul(x_div_acc, b.add(
        b.like(1.0 / _ZETA[terms - 1], acc), horner_sum))))
    accurate = b.add(b.add(power_sum, correction), tail)
    abs_q_neg_power = b.op("abs", q_neg_power)
    abs_power_sum = b.op("abs", power_sum)
    from ._builder import float_info

    smallest = float(float_info(tensor(acc).element_type).smallest_subnormal)
    output = b.select(b.cmp("LT", abs_q_neg_power, b.mul(abs_power_sum, b.like(smallest, acc))),
                      power_sum, accurate)
    nan = b.like(math.nan, x)
    output = b.select(b.cmp("LT", x, one_like_x), nan, output)
    q_le_zero = b.cmp("LE", q, zero)
    x_not_int = b.cmp("NE", x, b.op("floor", x))
    output = b.select(b.op("and", q_le_zero, x_not_int), nan, output)
    inf = b.like(math.inf, x)
    q_is_int = b.cmp("EQ", q, b.op("floor", q))
    at_pole = b.op("and", q_le_zero, q_is_int)
    two = b.like(2.0, x)
    x_is_int = b.cmp("EQ", x, b.op("floor", x))
    x_is_even = b.cmp("EQ", b.op("remainder", x, two), zero)
    x_is_even_int = b.op("and", x_is_int, x_is_even)
    output = b.select(at_pole, b.select(x_is_even_int, inf, nan), output)
    return b.select(b.cmp("EQ", x, one), inf, output)


def materialize_polygamma(b: Builder, n: Value, x: Value) -> Value:
    one, two = b.like(1.0, x), b.like(2.0, x)
    sign = b.sub(b.mul(two, b.op("remainder", n, two)), one)
    n_plus_one = b.add(n, one)
    exp_lgamma = b.op("exponential", b.chlo1("lgamma", n_plus_one))
    zeta = b.chlo1("zeta", n_plus_one, x)
    result = b.mul(b.mul(sign, exp_lgamma), zeta)
    zero = b.like(0.0, x)
    n_eq_zero = b.cmp("EQ", n, zero)
    result = b.select(n_eq_zero, b.chlo1("digamma", x), result)
    non_int = b.cmp("NE", n, b.op("floor", n))
    negative = b.cmp("LT", n, zero)
    non_natural = b.op("or", non_int, negative)
    return b.select(non_natural, b.like(math.nan, x), result)


@lowering("chlo.zeta")
def _lower_zeta(b: Builder, op: Operation, xs: Sequence[Value]) -> Sequence[Value]:
    return [b.with_upcast(xs, lambda x, q: materialize_zeta(b, x, q))]


@lowering("chlo.polygamma")
def _lower_polygamma(b: Builder, op: Operation, xs: Sequence[Value]) -> Sequence[Value]:
    return [b.with_upcast(xs, lambda n, x: materialize_polygamma(b, n, x))]
