//! Running a plugin's module with wasmtime: compiled once (and kept, keyed
//! by the module's hash and the engine's compatibility, so a later session
//! loads it instead of compiling), linked with exactly the host functions
//! its allowed capabilities name and nothing else (no WASI: no ambient file
//! system, clock or network), instantiated once per session, and each call
//! bounded in fuel (CPU), memory and output.
//!
//! The guest's side, as docs/plugins.md describes it: it exports `memory`,
//! `alloc(len: i32) -> i32` (room for the host to write the arguments
//! into), and for each tool `tool.<name>(ptr: i32, len: i32) -> i64`, given
//! the arguments as JSON text and answering `(ptr << 32) | len` of its
//! result's UTF-8 text. It may import, from module `chock`, only:
//!
//! - `log(ptr, len)` (capability `log`): a line the person sees;
//! - `fs_read(path_ptr, path_len, buf_ptr, buf_cap) -> i64` (`fs.read`):
//!   copies up to `buf_cap` bytes of a workspace file, answers its length,
//!   or -1 where it cannot be read;
//! - `fs_write(path_ptr, path_len, data_ptr, data_len) -> i32` (`fs.write`):
//!   writes a workspace file, answers 0, or -1.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use wasmtime::{
    Caller, Config, Extern, Linker, Memory, Module, Store, StoreLimits, StoreLimitsBuilder, Trap,
    TypedFunc,
};

use crate::manifest::{Capability, Manifest};

/// What a plugin's host functions reach of the workspace: the host's own
/// confinement (a path outside the workspace is refused there).
pub trait Files {
    fn read(&self, path: &str) -> Result<Vec<u8>, String>;
    fn write(&self, path: &str, data: &[u8]) -> Result<(), String>;
}

/// A call's bounds.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    /// Fuel one call may burn (about one unit a WebAssembly instruction).
    pub fuel: u64,
    /// Bytes the instance's memory may grow to.
    pub memory: usize,
    /// Bytes of a result, and of one log line.
    pub output: usize,
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds {
            fuel: 500_000_000,
            memory: 64 * 1024 * 1024,
            output: 256 * 1024,
        }
    }
}

/// What the host functions share with the session.
struct State {
    files: Rc<dyn Files>,
    said: Vec<String>,
    limits: StoreLimits,
    output: usize,
}

/// Why a module cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoadError {
    #[error("{} is not a WebAssembly module{detail}", path.display())]
    NotWasm { path: PathBuf, detail: String },
    #[error("{} does not match its manifest: {detail}", path.display())]
    Mismatch { path: PathBuf, detail: String },
    #[error("the plugin could not be instantiated: {0}")]
    Instantiate(String),
    #[error("{0}")]
    Engine(String),
}

/// Why a call gave no result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    #[error("the tool ran past its bound of {0} fuel and was stopped")]
    OutOfFuel(u64),
    #[error("the tool trapped: {0}")]
    Trapped(String),
    #[error("the tool's result is {0} bytes, over the bound of {1}")]
    TooLong(usize, usize),
    #[error("the tool's result is not UTF-8 text")]
    NotText,
    #[error("the tool's result lies outside its memory")]
    OutOfMemory,
}

/// A call's outcome: the result, and the lines the plugin logged.
#[derive(Debug)]
pub struct Called {
    pub result: Result<String, CallError>,
    pub said: Vec<String>,
}

/// The session's engine: one for every plugin.
pub struct Engine {
    engine: wasmtime::Engine,
    cache: Option<PathBuf>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("cache", &self.cache)
            .finish_non_exhaustive()
    }
}

impl Engine {
    /// An engine that meters fuel; compiled modules are kept in `cache`
    /// (the state directory's, which no sandbox can write) when given.
    pub fn new(cache: Option<PathBuf>) -> Result<Engine, LoadError> {
        let mut config = Config::new();
        config.consume_fuel(true);
        let engine =
            wasmtime::Engine::new(&config).map_err(|err| LoadError::Engine(err.to_string()))?;
        Ok(Engine { engine, cache })
    }

    /// Compiles `path` (or loads it compiled from the cache) and checks it
    /// against `manifest`: it exports `memory`, `alloc` and each tool with
    /// its type, and imports nothing but the host functions of `chock`.
    pub fn module(&self, path: &Path, manifest: &Manifest) -> Result<Module, LoadError> {
        let bytes = crate::manifest::read_bounded_bytes(path, crate::manifest::MODULE_BOUND)
            .map_err(|detail| LoadError::NotWasm {
                path: path.to_owned(),
                detail: format!(": it cannot be read ({detail})"),
            })?;
        if !bytes.starts_with(b"\0asm") {
            return Err(LoadError::NotWasm {
                path: path.to_owned(),
                detail: " (it does not start with the WebAssembly magic number)".to_owned(),
            });
        }
        let module = self.compiled(&bytes).map_err(|detail| LoadError::NotWasm {
            path: path.to_owned(),
            detail: format!(": {detail}"),
        })?;
        check_exports(&module, manifest).map_err(|detail| LoadError::Mismatch {
            path: path.to_owned(),
            detail,
        })?;
        Ok(module)
    }

    fn compiled(&self, bytes: &[u8]) -> Result<Module, String> {
        let Some(cache) = &self.cache else {
            return Module::new(&self.engine, bytes).map_err(|err| err.to_string());
        };
        let file = cache.join(format!("{}.cwasm", self.key(bytes)));
        if file.is_file() {
            // SAFETY: the file is one this engine wrote (serialize below),
            // in the state directory, which no session's command can write;
            // its name holds the module's hash and the engine's
            // compatibility, and wasmtime refuses one of another engine.
            if let Ok(module) = unsafe { Module::deserialize_file(&self.engine, &file) } {
                return Ok(module);
            }
        }
        let module = Module::new(&self.engine, bytes).map_err(|err| err.to_string())?;
        if let Ok(serialized) = module.serialize() {
            let _ = std::fs::create_dir_all(cache);
            let temp = file.with_extension(format!("tmp{}", std::process::id()));
            if std::fs::write(&temp, serialized).is_ok() {
                let _ = std::fs::rename(&temp, &file);
            }
        }
        Ok(module)
    }

    /// The cache's name for `bytes` compiled by this engine.
    fn key(&self, bytes: &[u8]) -> String {
        use sha2::Digest as _;
        use std::hash::{Hash as _, Hasher as _};
        let digest = sha2::Sha256::digest(bytes);
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        self.engine
            .precompile_compatibility_hash()
            .hash(&mut hasher);
        let hex: String = digest.iter().take(16).map(|b| format!("{b:02x}")).collect();
        format!("{hex}-{:016x}", hasher.finish())
    }

    /// An instance of `module` linked with the host functions of
    /// `capabilities` alone: an import of any other fails here, before any
    /// guest code runs.
    pub fn instantiate(
        &self,
        module: &Module,
        capabilities: &BTreeSet<Capability>,
        files: Rc<dyn Files>,
        bounds: Bounds,
    ) -> Result<Instance, LoadError> {
        let mut linker: Linker<State> = Linker::new(&self.engine);
        for cap in capabilities {
            link(&mut linker, *cap).map_err(|err| LoadError::Engine(err.to_string()))?;
        }
        for import in module.imports() {
            let known = import.module() == "chock"
                && capabilities.iter().any(|c| c.import() == import.name());
            if !known {
                let given = Capability::ALL
                    .iter()
                    .find(|c| import.module() == "chock" && c.import() == import.name());
                let why = match given {
                    Some(cap) => format!(
                        "it imports {}.{}, the host function of the capability {}, which no offered tool of it was allowed",
                        import.module(),
                        import.name(),
                        cap.as_str()
                    ),
                    None => format!(
                        "it imports {}.{}, which is no host function Chock gives",
                        import.module(),
                        import.name()
                    ),
                };
                return Err(LoadError::Instantiate(why));
            }
        }
        let state = State {
            files,
            said: Vec::new(),
            limits: StoreLimitsBuilder::new()
                .memory_size(bounds.memory)
                .instances(1)
                .tables(4)
                .build(),
            output: bounds.output,
        };
        let mut store = Store::new(&self.engine, state);
        store.limiter(|state| &mut state.limits);
        store
            .set_fuel(bounds.fuel)
            .map_err(|err| LoadError::Engine(err.to_string()))?;
        let instance = linker
            .instantiate(&mut store, module)
            .map_err(|err| LoadError::Instantiate(err.to_string()))?;
        let memory = instance
            .get_memory(&mut store, "memory")
            .ok_or_else(|| LoadError::Instantiate("it exports no memory".to_owned()))?;
        let alloc = instance
            .get_typed_func::<i32, i32>(&mut store, "alloc")
            .map_err(|err| LoadError::Instantiate(err.to_string()))?;
        let mut tools = Vec::new();
        for export in module.exports() {
            if let Some(tool) = export.name().strip_prefix("tool.") {
                let func = instance
                    .get_typed_func::<(i32, i32), i64>(&mut store, export.name())
                    .map_err(|err| LoadError::Instantiate(err.to_string()))?;
                tools.push((tool.to_owned(), func));
            }
        }
        Ok(Instance {
            store,
            memory,
            alloc,
            tools,
            bounds,
        })
    }
}

/// Every tool of the manifest is exported as `tool.<name>` with the tool
/// type, and `memory` and `alloc` are there.
fn check_exports(module: &Module, manifest: &Manifest) -> Result<(), String> {
    let export = |name: &str| module.get_export(name);
    match export("memory") {
        Some(wasmtime::ExternType::Memory(_)) => {}
        _ => return Err("it exports no memory".to_owned()),
    }
    match export("alloc") {
        Some(wasmtime::ExternType::Func(f))
            if f.params().map(|p| p.to_string()).collect::<Vec<_>>() == ["i32"]
                && f.results().map(|p| p.to_string()).collect::<Vec<_>>() == ["i32"] => {}
        _ => return Err("it exports no alloc(i32) -> i32".to_owned()),
    }
    for tool in &manifest.tools {
        let name = format!("tool.{}", tool.name);
        match export(&name) {
            Some(wasmtime::ExternType::Func(f))
                if f.params().map(|p| p.to_string()).collect::<Vec<_>>() == ["i32", "i32"]
                    && f.results().map(|p| p.to_string()).collect::<Vec<_>>() == ["i64"] => {}
            Some(_) => return Err(format!("its export {name} is not (i32, i32) -> i64")),
            None => {
                return Err(format!(
                    "the manifest names the tool {}, and the module exports no {name}",
                    tool.name
                ));
            }
        }
    }
    Ok(())
}

/// The bytes `[ptr, ptr + len)` of the caller's memory.
fn guest_bytes(caller: &mut Caller<'_, State>, ptr: i32, len: i32) -> wasmtime::Result<Vec<u8>> {
    let Some(Extern::Memory(memory)) = caller.get_export("memory") else {
        return Err(wasmtime::Error::msg("the plugin exports no memory"));
    };
    let (start, len) = (ptr as u32 as usize, len as u32 as usize);
    memory
        .data(&caller)
        .get(start..start.saturating_add(len))
        .map(<[u8]>::to_vec)
        .ok_or_else(|| wasmtime::Error::msg("a host call named bytes outside the plugin's memory"))
}

fn guest_text(caller: &mut Caller<'_, State>, ptr: i32, len: i32) -> wasmtime::Result<String> {
    let bound = caller.data().output;
    if len as u32 as usize > bound {
        return Err(wasmtime::Error::msg(format!(
            "a host call's text is over the bound of {bound} bytes"
        )));
    }
    String::from_utf8(guest_bytes(caller, ptr, len)?)
        .map_err(|_| wasmtime::Error::msg("a host call's text is not UTF-8"))
}

/// Defines `cap`'s host function in `linker`.
fn link(linker: &mut Linker<State>, cap: Capability) -> wasmtime::Result<()> {
    match cap {
        Capability::Log => {
            linker.func_wrap(
                "chock",
                "log",
                |mut caller: Caller<'_, State>, ptr: i32, len: i32| {
                    let text = guest_text(&mut caller, ptr, len)?;
                    caller.data_mut().said.push(text);
                    Ok(())
                },
            )?;
        }
        Capability::FsRead => {
            linker.func_wrap(
                "chock",
                "fs_read",
                |mut caller: Caller<'_, State>,
                 path_ptr: i32,
                 path_len: i32,
                 buf_ptr: i32,
                 buf_cap: i32| {
                    let path = guest_text(&mut caller, path_ptr, path_len)?;
                    let files = Rc::clone(&caller.data().files);
                    let Ok(data) = files.read(&path) else {
                        return Ok(-1_i64);
                    };
                    let Some(Extern::Memory(memory)) = caller.get_export("memory") else {
                        return Ok(-1);
                    };
                    let n = data.len().min(buf_cap as u32 as usize);
                    memory.write(&mut caller, buf_ptr as u32 as usize, &data[..n])?;
                    Ok(i64::try_from(data.len()).unwrap_or(i64::MAX))
                },
            )?;
        }
        Capability::FsWrite => {
            linker.func_wrap(
                "chock",
                "fs_write",
                |mut caller: Caller<'_, State>,
                 path_ptr: i32,
                 path_len: i32,
                 data_ptr: i32,
                 data_len: i32| {
                    let path = guest_text(&mut caller, path_ptr, path_len)?;
                    let data = guest_bytes(&mut caller, data_ptr, data_len)?;
                    let files = Rc::clone(&caller.data().files);
                    Ok(if files.write(&path, &data).is_ok() {
                        0_i32
                    } else {
                        -1
                    })
                },
            )?;
        }
    }
    Ok(())
}

/// A tool's export: the arguments' place and length in, the result's out.
type ToolFunc = TypedFunc<(i32, i32), i64>;

/// One plugin's instance in a session.
pub struct Instance {
    store: Store<State>,
    memory: Memory,
    alloc: TypedFunc<i32, i32>,
    tools: Vec<(String, ToolFunc)>,
    bounds: Bounds,
}

impl std::fmt::Debug for Instance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Instance")
            .field(
                "tools",
                &self.tools.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl Instance {
    /// Calls `tool` with `arguments` (JSON text), refuelled to the bound.
    pub fn call(&mut self, tool: &str, arguments: &str) -> Called {
        let result = self.try_call(tool, arguments);
        let said = std::mem::take(&mut self.store.data_mut().said);
        Called { result, said }
    }

    fn try_call(&mut self, tool: &str, arguments: &str) -> Result<String, CallError> {
        let func = self
            .tools
            .iter()
            .find(|(name, _)| name == tool)
            .map(|(_, f)| f.clone())
            .ok_or_else(|| CallError::Trapped(format!("the plugin exports no tool.{tool}")))?;
        self.store
            .set_fuel(self.bounds.fuel)
            .map_err(|err| CallError::Trapped(err.to_string()))?;
        let len = i32::try_from(arguments.len())
            .map_err(|_| CallError::TooLong(arguments.len(), i32::MAX as usize))?;
        let ptr = self
            .alloc
            .call(&mut self.store, len)
            .map_err(|err| self.trap(err))?;
        self.memory
            .write(&mut self.store, ptr as u32 as usize, arguments.as_bytes())
            .map_err(|_| CallError::OutOfMemory)?;
        let packed = func
            .call(&mut self.store, (ptr, len))
            .map_err(|err| self.trap(err))?;
        let (at, size) = (
            (packed >> 32) as u32 as usize,
            (packed & 0xffff_ffff) as u32 as usize,
        );
        if size > self.bounds.output {
            return Err(CallError::TooLong(size, self.bounds.output));
        }
        let bytes = self
            .memory
            .data(&self.store)
            .get(at..at.saturating_add(size))
            .ok_or(CallError::OutOfMemory)?
            .to_vec();
        String::from_utf8(bytes).map_err(|_| CallError::NotText)
    }

    fn trap(&self, err: wasmtime::Error) -> CallError {
        if err.downcast_ref::<Trap>() == Some(&Trap::OutOfFuel) {
            CallError::OutOfFuel(self.bounds.fuel)
        } else {
            CallError::Trapped(format!("{err:#}"))
        }
    }
}
