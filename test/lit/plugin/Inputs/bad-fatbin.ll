@fb = constant { i32, ptr } { i32 1, ptr null }, section ".hip_fatbin"
