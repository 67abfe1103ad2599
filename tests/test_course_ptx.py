"""course.ptx reads PTX the way the lessons rely on: float64 instructions (less libdevice's own),
instructions by kind, and the innermost loop that holds the multiply-adds. Written PTX, so no compiler is
needed here; the compiled kernels are checked in tests/test_lessons.py."""

from course import ptx

SIGMOID_IN_FLOAT64 = """
	ld.global.f32 	%f1, [%rd14];
	ex2.approx.ftz.f32 	%f17, %f15;
	cvt.f64.f32 	%fd1, %f18;
	add.f64 	%fd2, %fd1, 0d3FF0000000000000;
	rcp.rn.f64 	%fd3, %fd2;
	cvt.rn.f32.f64 	%f19, %fd3;
	st.global.f32 	[%rd19], %f19;
"""

# PTX numbers its virtual registers once per kernel: these differ from the sigmoid's
SINE_REDUCTION = """
	cvt.rn.f64.s64 	%fd10, %rd22;
	mul.f64 	%fd11, %fd10, 0d3BF921FB54442D19;
	cvt.rn.f32.f64 	%f21, %fd11;
	sin.approx.f32 	%f22, %f21;
"""

LOOPS = """
$L__BB0_1:
	ld.global.f32 	%f1, [%rd1];
$L__BB0_2:
	shr.s64 	%rd10, %rd9, 63;
	and.b64  	%rd11, %rd10, %rd3;
	add.s64 	%rd12, %rd11, %rd9;
	mul.wide.s32 	%rd13, %r1, 4;
	ld.shared.f32 	%f2, [%rd12];
	fma.rn.f32 	%f3, %f2, %f2, %f3;
	@%p1 bra 	$L__BB0_2;
	bar.sync 	0;
	@%p2 bra 	$L__BB0_1;
"""


def test_float64_instructions_are_found():
    assert ptx.float64_lines(SIGMOID_IN_FLOAT64) == [
        "cvt.f64.f32 \t%fd1, %f18;", "add.f64 \t%fd2, %fd1, 0d3FF0000000000000;", "rcp.rn.f64 \t%fd3, %fd2;",
        "cvt.rn.f32.f64 \t%f19, %fd3;"]


def test_libdevice_sine_reduction_is_not_the_kernels_float64():
    assert ptx.float64_lines(SINE_REDUCTION) == []
    assert len(ptx.float64_lines(SINE_REDUCTION + SIGMOID_IN_FLOAT64)) == 4


def test_innermost_loop_and_instruction_kinds():
    loop = ptx.innermost_loop(LOOPS)
    assert loop.startswith("$L__BB0_2:") and "bar.sync" not in loop
    mix = ptx.instruction_mix(loop)
    assert mix["64-bit integer"] == 4, "shr, and, add and the widening multiply"
    assert (mix["shared load"], mix["float32 FMA"], mix["global load"]) == (1, 1, 0)


def test_normalized_keeps_the_code_and_drops_names_comments_and_debug_lines():
    first = """.visible .shared .align 4 .b8 _cudapy_smem_1[280];
.visible .entry _ZN6cudapy4cell1kB2v1E(  // the kernel
	.loc	1 8 5
	ld.shared.f32 	%f1, [_cudapy_smem_1];
	.file	1 "<02 cell 8>"
"""
    renamed = first.replace("v1E", "v7E").replace("smem_1", "smem_4").replace("8 5", "9 1").replace(
        "02 cell 8", "02 cell 8 mutant 3f")
    widened = renamed.replace("ld.shared.f32 \t%f1", "ld.shared.f64 \t%fd1")
    assert ptx.normalized(first) == ptx.normalized(renamed)
    assert ptx.normalized(first) != ptx.normalized(widened)
    assert ptx.normalized(first)[-1] == "ld.shared.f32 \t%f1, [symbol0];"
