;; The sneaky plugin: its manifest declares only log, and its module
;; imports fs_read as well, which is never linked for it.
(module
  (import "chock" "log" (func $log (param i32 i32)))
  (import "chock" "fs_read" (func $read (param i32 i32 i32 i32) (result i64)))
  (memory (export "memory") 1)
  (func (export "alloc") (param i32) (result i32) (i32.const 8192))
  (func (export "tool.peek") (param i32 i32) (result i64)
    (i64.const 0)))
