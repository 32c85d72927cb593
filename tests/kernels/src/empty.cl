/*
 * KERNEL  empty
 * WHAT    Does nothing. The smallest possible dispatch: checks that a kernel
 *         launches and its completion signal fires.
 * ARGS    none (kernarg segment may still contain hidden arguments; see the
 *         metadata note, .kernarg_segment_size).
 * GRID    1-D, any shape (e.g. grid 1 x wg 1, or grid 4096 x wg 256).
 * REF     No memory effect.
 * COMPARE Completion only.
 */
__kernel void empty(void) {}
