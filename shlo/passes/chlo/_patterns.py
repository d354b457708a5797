"""The decompositions upstream writes as DRR patterns (stablehlo/transforms/
ChloDecompositionPatterns.td and the generated ChloDecompositionPatternsMath.td,
functional_algorithms 0.12.0), as data: ``(chlo op, operand kind, pattern variables, result DAG)``.

The DAG is an s-expression evaluated by :mod:`.dag`: ``(op[:name] args...)`` creates a
`stablehlo.<op>` (``chlo.<op>``: a chlo op, lowered in place), ``$name`` reads a pattern variable
or a value named earlier, ``(c VALUE $like)`` is a constant shaped like ``$like``;
``max_finite``, ``pos_inf``, ``neg_inf``, ``smallest_normal`` are the float type's constants;
``compare.DIR``; ``upcast``/``unsigned``/``width``/``convert_result`` are mulhi's helpers. Ops
are created in the order upstream's generated rewriters create them: arguments before the op,
left to right, each named value once. Operand kinds: ``real`` (not complex), ``complex``,
``any``, and for mulhi the integer class.
"""

PATTERNS: tuple[tuple[str, str, tuple[str, ...], str], ...] = (
    ('chlo.atan', 'real', ('input',),
     '(atan2 $input (c 1 $input))'),
    ('chlo.atanh', 'real', ('input',),
     ('(select (compare.GT (abs $input) (c 1 $input)) (c NAN $input) (multiply (subtract '
      '(log_plus_one $input) (log_plus_one (negate $input))) (c 0.5 $input)))')),
    ('chlo.conj', 'complex', ('v',),
     '(complex (real $v) (negate (imag $v)))'),
    ('chlo.conj', 'real', ('v',),
     '$v'),
    ('chlo.is_inf', 'real', ('input',),
     '(chlo.is_pos_inf (abs $input))'),
    ('chlo.is_pos_inf', 'real', ('input',),
     '(compare.EQ $input (pos_inf $input))'),
    ('chlo.is_neg_inf', 'real', ('input',),
     '(compare.EQ $input (neg_inf $input))'),
    ('chlo.mulhi', 'signed<64', ('lhs', 'rhs'),
     ('(convert_result (shift_right_arithmetic (multiply:wideMul (upcast $lhs) (upcast $rhs)) '
      '(width $lhs $wideMul)))')),
    ('chlo.mulhi', 'unsigned<64', ('lhs', 'rhs'),
     ('(convert_result (shift_right_logical (multiply:wideMul (upcast $lhs) (upcast $rhs)) '
      '(width $lhs $wideMul)))')),
    ('chlo.mulhi', 'unsigned64', ('lhs', 'rhs'),
     ('(add (add (multiply:p3 (shift_right_logical:a_hi $lhs (c 32 $lhs)) '
      '(shift_right_logical:b_hi $rhs (c 32 $rhs))) (shift_right_logical:carry_mid1 (add:mid1 '
      '(multiply:p1 (and:a_lo $lhs (c 0xFFFFFFFFULL $lhs)) $b_hi) (shift_right_logical:carry_p0'
      ' (multiply:p0 $a_lo (and:b_lo $rhs (c 0xFFFFFFFFULL $rhs))) (c 32 $lhs))) (c 32 $lhs))) '
      '(shift_right_logical:carry_mid2 (add:mid2 (multiply:p2 $a_hi $b_lo) (and $mid1 (c '
      '0xFFFFFFFFULL $lhs))) (c 32 $lhs)))')),
    ('chlo.mulhi', 'signed64', ('lhs', 'rhs'),
     ('(convert_result (subtract (subtract (chlo.mulhi:hi (unsigned $lhs) (unsigned $rhs)) '
      '(select (compare.LT $lhs (c 0 $lhs)) (unsigned $rhs) (c 0 (unsigned $rhs)))) (select '
      '(compare.LT $rhs (c 0 $rhs)) (unsigned $lhs) (c 0 (unsigned $lhs)))))')),
    ('chlo.tan', 'any', ('input',),
     '(tan $input)'),
    ('chlo._asin_acos_kernel', 'complex', ('z',),
     ('(complex (select (compare.GE (maximum (abs:x (real:signed_x $z)) (abs:y (imag:signed_y '
      '$z))) (divide:safe_max (sqrt (max_finite $signed_x)) (c 8 $signed_x))) $y (select '
      '(compare.LE $x (c:one 1 $signed_x)) (sqrt (multiply (multiply:half_apx (c:half 0.5 '
      '$signed_x) (add (multiply:a $half (add (select:r (compare.EQ (maximum:mx (abs:abs_xp1 '
      '(add:xp1 $x $one)) $y) (minimum:mn $abs_xp1 $y)) (multiply (c:sqrt_two '
      '1.4142135623730951 $signed_x) $mx) (select (and (compare.EQ (sqrt:sqa (add $one '
      '(multiply:_r_0_ (divide:mn_over_mx $mn $mx) $mn_over_mx))) $one) (compare.GT $_r_0_ '
      '(c:zero 0 $signed_x))) (add $mx (divide (multiply $mx $_r_0_) (c:two 2 $signed_x))) '
      '(multiply $mx $sqa))) (select:s (compare.EQ (maximum:_mx_0_ (abs:abs_xm1 (subtract:xm1 '
      '$x $one)) $y) (minimum:_mn_0_ $abs_xm1 $y)) (multiply $sqrt_two $_mx_0_) (select (and '
      '(compare.EQ (sqrt:_sqa_0_ (add $one (multiply:_r_1_ (divide:_mn_over_mx_0_ $_mn_0_ '
      '$_mx_0_) $_mn_over_mx_0_))) $one) (compare.GT $_r_1_ $zero)) (add $_mx_0_ (divide '
      '(multiply $_mx_0_ $_r_1_) $two)) (multiply $_mx_0_ $_sqa_0_))))) $x)) (add (divide '
      '(multiply:yy $y $y) (add:rpxp1 $r $xp1)) (subtract:smxm1 $s $xm1)))) (multiply $y (sqrt '
      '(add (divide $half_apx $rpxp1) (divide $half_apx (add:spxm1 $s $xm1))))))) (select '
      '(compare.GE (select:_mx_1_ (compare.GE:y_gt_safe_max_opt $y (select:safe_max_opt '
      '(compare.LT $x (multiply $safe_max (c 1000000000000.0 $signed_x))) (multiply $safe_max '
      '(c 1e-06 $signed_x)) (multiply $safe_max (c 100.0 $signed_x)))) $y $x) (select '
      '$y_gt_safe_max_opt $safe_max_opt $safe_max)) (add (add (log $two) (log $_mx_1_)) '
      '(multiply $half (log_plus_one (multiply (select:xoy (and $y_gt_safe_max_opt (not '
      '(compare.EQ $y (pos_inf $signed_y)))) (divide $x $y) $zero) $xoy)))) (select '
      '(and:logical_and_lt_y_safe_min_lt_x_one (compare.LT $y (multiply (sqrt (smallest_normal '
      '$signed_x)) (c 4 $signed_x))) (compare.LT $x $one)) (divide $y (sqrt:sq (multiply '
      '(select:am1 $logical_and_lt_y_safe_min_lt_x_one (negate (divide (multiply $xp1 $xm1) '
      '(add:ap1 $a $one))) (select:x_ge_1_or_not (compare.GE $x $one) (add '
      '(divide:divide_half_yy_rpxp1 (multiply:half_yy $half $yy) $rpxp1) (multiply $half '
      '$spxm1)) (select (compare.LE $a (c 1.5 $signed_x)) (add $divide_half_yy_rpxp1 (divide '
      '$half_yy $smxm1)) (subtract $a $one)))) $ap1))) (log_plus_one (add $am1 $sq)))))')),
    ('chlo.asin', 'complex', ('z',),
     ('(complex (atan2:real (real:signed_x $z) (real (chlo._asin_acos_kernel:asin_acos_kernel_z'
      ' $z))) (select (compare.LT (imag:signed_y $z) (c 0 $signed_x)) (negate '
      '(imag:imag_asin_acos_kernel_z $asin_acos_kernel_z)) $imag_asin_acos_kernel_z))')),
    ('chlo.asin', 'real', ('x',),
     ('(add (atan2:ta $x (add (c:one 1 $x) (sqrt (multiply (subtract $one $x) (add $one $x)))))'
      ' $ta)')),
    ('chlo.acos', 'complex', ('z',),
     ('(complex (atan2 (real (chlo._asin_acos_kernel:asin_acos_kernel_z $z)) (real:signed_x '
      '$z)) (select (compare.LT (imag:signed_y $z) (c 0 $signed_y)) '
      '(imag:imag_asin_acos_kernel_z $asin_acos_kernel_z) (negate $imag_asin_acos_kernel_z)))')),
    ('chlo.acos', 'real', ('x',),
     '(atan2 (sqrt (multiply (subtract (c:constant_1 1 $x) $x) (add $constant_1 $x))) $x)'),
    ('chlo.acosh', 'complex', ('z',),
     ('(complex (imag (chlo._asin_acos_kernel:w $z)) (select (compare.LT (imag:signed_y $z) (c '
      '0 $signed_y)) (negate (atan2:imag (real $w) (real:signed_x $z))) $imag))')),
    ('chlo.acosh', 'real', ('x',),
     ('(select (compare.GE $x (divide (max_finite $x) (c:constant_2 2 $x))) (add (log '
      '$constant_2) (log $x)) (log_plus_one (multiply (sqrt:sqrt_subtract_x_constant_1 '
      '(subtract $x (c:constant_1 1 $x))) (add (sqrt (add $x $constant_1)) '
      '$sqrt_subtract_x_constant_1))))')),
    ('chlo.asinh', 'complex', ('z',),
     ('(complex (select (compare.LT (real:signed_x $z) (c 0 $signed_x)) (negate (imag:imag_w '
      '(chlo._asin_acos_kernel:w (complex (negate (imag:signed_y $z)) $signed_x)))) $imag_w) '
      '(atan2 $signed_y (real $w)))')),
    ('chlo.asinh', 'real', ('x',),
     ('(multiply (sign $x) (select (compare.GE (abs:ax $x) (sqrt (max_finite $x))) (add (log (c'
      ' 2 $x)) (log $ax)) (log_plus_one (add $ax (divide (multiply:ax2 $ax $ax) (add (c:one 1 '
      '$x) (sqrt (add $one $ax2))))))))')),
    ('chlo.atan', 'complex', ('z',),
     ('(complex (imag (chlo.atanh:w (complex (negate (imag $z)) (real $z)))) (negate (real '
      '$w)))')),
    ('chlo.atanh', 'complex', ('z',),
     ('(complex (multiply (multiply (select (compare.GE (real:x $z) (c:zero 0 $x)) (c:one 1 $x)'
      ' (c:constant_neg1 -1 $x)) (log_plus_one (multiply (c 4 $x) (select (and:in_safe_region '
      '(compare.LT (abs:ax $x) (multiply:safe_max (select:inv_negeps (compare.GT '
      '(max_finite:largest $x) (c 1e+308 $x)) (c 9007199254740994.0 $x) (select (compare.GT '
      '$largest (c 1e+38 $x)) (c 16777218.0 $x) (c 2050.0 $x))) $inv_negeps)) (compare.LT '
      '(abs:ay (imag:y $z)) $safe_max)) (divide $ax (add (multiply (subtract:naxm1 $one $ax) '
      '$naxm1) (multiply:y2 $y $y))) (select (compare.LT (multiply $ay $inv_negeps) $ax) '
      '(divide $one $ax) (select (or (or (compare.EQ $x (pos_inf:constant_posinf $x)) '
      '(compare.EQ $x (neg_inf:constant_neginf $x))) (or (compare.EQ $y $constant_posinf) '
      '(compare.EQ $y $constant_neginf))) $zero (divide (divide $one (add (divide $ax $y) '
      '(divide $y $ax))) $y))))))) (c 0.25 $x)) (multiply (select $in_safe_region (atan2 (add '
      '$y $y) (subtract (multiply $naxm1 (add $one $ax)) $y2)) (multiply (select (compare.GE $y'
      ' (c 0 $y)) $one $constant_neg1) (c M_PI $x))) (c 0.5 $x)))')),
    ('chlo.square', 'complex', ('z',),
     ('(complex (select (and (is_finite (real:x $z)) (compare.EQ (abs $x) (abs (imag:y $z)))) '
      '(c 0 $x) (multiply (subtract $x $y) (add $x $y))) (multiply (c 2 $x) (multiply $x $y)))')),
    ('chlo.square', 'real', ('x',),
     '(multiply $x $x)'),
)
