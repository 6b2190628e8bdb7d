# Like the old driver's -fgpu-rdc link object, with two bundles: global
# symbols name each bundle; a third wrapper refers to the second bundle
# through a local label, i.e. `.hip_fatbin + offset`.
  .section .hip_fatbin,"a",@progbits
  .globl __hip_fatbin_a
  .type __hip_fatbin_a,@object
  .p2align 12
__hip_fatbin_a:
  .incbin "a.hipfb"
  .size __hip_fatbin_a, .-__hip_fatbin_a
  .p2align 12
  .globl __hip_fatbin_b
  .type __hip_fatbin_b,@object
__hip_fatbin_b:
local_b:
  .incbin "b.hipfb"
  .size __hip_fatbin_b, .-__hip_fatbin_b

  .section .hipFatBinSegment,"aw",@progbits
  .p2align 3
  .long 0x48495046
  .long 1
  .quad __hip_fatbin_a
  .quad 0
  .long 0x48495046
  .long 1
  .quad __hip_fatbin_b
  .quad 0
  .long 0x48495046
  .long 1
  .quad local_b
  .quad 0
