;; The writer plugin: tool.save writes out.txt through fs_write
;; (capability fs.write).
(module
  (import "chock" "fs_write" (func $write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (func (export "alloc") (param i32) (result i32) (i32.const 8192))
  (data (i32.const 16) "out.txt")
  (data (i32.const 32) "saved")
  (func (export "tool.save") (param $ptr i32) (param $len i32) (result i64)
    (drop (call $write (i32.const 16) (i32.const 7) (local.get $ptr) (local.get $len)))
    (i64.or (i64.shl (i64.const 32) (i64.const 32)) (i64.const 5))))
