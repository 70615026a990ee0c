;; The hello plugin: tool.greet logs a line and answers a greeting that
;; echoes its arguments; tool.spin loops until its fuel runs out;
;; tool.garbage answers bytes that are not UTF-8; tool.huge answers a
;; length over any bound; tool.grow grows its memory past the bound.
(module
  (import "chock" "log" (func $log (param i32 i32)))
  (memory (export "memory") 1)
  (global $next (mut i32) (i32.const 8192))
  (func (export "alloc") (param $len i32) (result i32)
    (local $at i32)
    (local.set $at (global.get $next))
    (global.set $next (i32.add (global.get $next) (local.get $len)))
    (local.get $at))
  (data (i32.const 16) "the hello plugin was called")
  (data (i32.const 64) "hello from the plugin, given ")
  (data (i32.const 128) "\ff\fe\fd")
  (func (export "tool.greet") (param $ptr i32) (param $len i32) (result i64)
    (call $log (i32.const 16) (i32.const 27))
    ;; The answer: the 29-byte greeting at 4096, then the arguments.
    (memory.copy (i32.const 4096) (i32.const 64) (i32.const 29))
    (memory.copy (i32.const 4125) (local.get $ptr) (local.get $len))
    (i64.or
      (i64.shl (i64.const 4096) (i64.const 32))
      (i64.extend_i32_u (i32.add (i32.const 29) (local.get $len)))))
  (func (export "tool.spin") (param i32 i32) (result i64)
    (loop $forever (br $forever))
    (i64.const 0))
  (func (export "tool.garbage") (param i32 i32) (result i64)
    (i64.or (i64.shl (i64.const 128) (i64.const 32)) (i64.const 3)))
  (func (export "tool.huge") (param i32 i32) (result i64)
    (i64.or (i64.shl (i64.const 0) (i64.const 32)) (i64.const 0x7fffffff)))
  (func (export "tool.grow") (param i32 i32) (result i64)
    (drop (memory.grow (i32.const 30000)))
    (if (i32.lt_s (memory.size) (i32.const 2)) (then unreachable))
    (i64.const 0)))
