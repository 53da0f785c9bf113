//! Why a kernel cannot be loaded ([`LoadError`]), with the memory limits the
//! loader's checks hold a run to and the state estimate shown when a run passes
//! them ([`StateEstimate`]).

use super::sizes::{limit_size, size, sizes_apart};
use crate::exec::decode::DecodeError;
use crate::load::npy::NpyError;
use spu_io::numbers::counted;
use spu_isa::Ty;

/// Most memory the state of one run's units, CBs and per-instruction counters may
/// take (global memory is bounded separately by `memory.global_mib`), so that a
/// run of a small kernel with the default global memory stays under 3 GiB.
pub const MAX_STATE_BYTES: u64 = 1 << 30;

/// The most the line table's file names may take when written out once per
/// instruction, as the statistics (`pcs[].file`), reports and traces write them.
pub const LINE_NAMES_BYTES: u64 = 128 << 20;

/// Most memory a run's buffers (as laid out, written or not) and its state may
/// take together, unless `memory.global_mib` is set higher: with what the
/// estimate leaves out (the code, the statistics, threads' stacks), a run stays
/// under 2 GiB.
pub const RUN_BYTES: u64 = 1792 << 20;

/// Why a kernel cannot be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("`-D {0}` needs the form NAME=VALUE, e.g. `-D N=256`")]
    DefineSyntax(String),
    #[error("{0}")]
    RepeatedDefine(String),
    #[error("the kernel has no parameter `{name}`; {list}")]
    UnknownParam { name: String, list: String },
    #[error("`-D {name}={value}`: parameter `{name}` is .{ty} and `{value}` {why}")]
    BadParamValue {
        name: String,
        ty: Ty,
        value: String,
        why: String,
    },
    #[error("parameter `{name}` has no default value; give one with `-D {name}=VALUE`{hint}")]
    MissingParam { name: String, hint: &'static str },
    /// `context`: where the expression comes from and how to change it (or empty).
    #[error("{what} `{text}` cannot be evaluated: {why}{context}")]
    BadExpr {
        what: String,
        text: String,
        why: String,
        context: String,
    },
    #[error("{what} is {value}, but {limit}{context}")]
    Limit {
        what: String,
        value: String,
        limit: String,
        context: String,
    },
    #[error("{0}")]
    StateTooLarge(StateEstimate),
    #[error(
        "the kernel has {count} instructions; decoded, with their counters, they would take {}, past the {} the emulator holds besides global memory: split the kernel, or loop instead of unrolling",
        size(*bytes),
        limit_size(MAX_STATE_BYTES)
    )]
    CodeTooLarge { count: String, bytes: u64 },
    #[error(
        "the kernel's line table names the source file `{file}` for {count} instructions; the statistics, reports and traces write an instruction's file name with each instruction, {} of names in all, past the {} they may take: assemble from a shorter path (a shorter `.file` name, or the source in a folder with a shorter path)",
        size(*total),
        limit_size(LINE_NAMES_BYTES)
    )]
    LineNamesTooLarge {
        file: String,
        count: String,
        total: u64,
    },
    #[error(
        "the kernel's calls reach byte {frames} of a thread's local memory (their frames start past their callers'), and this run holds {threads} threads at once, which leaves {share} bytes of local memory a thread within the emulator's limits on a run's memory ({} of state, {} with the buffers); use a smaller --grid or fewer threads per block, so that at most {most} threads are held at once, smaller local arrays or smaller buffers",
        limit_size(MAX_STATE_BYTES),
        limit_size(RUN_BYTES)
    )]
    LocalTooLarge {
        threads: u64,
        share: u32,
        frames: u64,
        most: u64,
    },
    #[error(
        "the initialiser of buffer `{name}` does not fit its type: {why}; change the initialiser, or the buffer's size or type"
    )]
    Init { name: String, why: String },
    #[error("`{option} {arg}` needs the form BUF=FILE.npy")]
    BufferArgSyntax { option: &'static str, arg: String },
    #[error("`{option}`: the kernel has no buffer `{name}`; buffers are {list}")]
    UnknownBuffer {
        option: &'static str,
        name: String,
        list: String,
    },
    #[error(
        "`{option} {first}` and `{option} {second}` both name buffer `{name}`; give one {option} per buffer"
    )]
    BufferTwice {
        option: &'static str,
        first: String,
        second: String,
        name: String,
    },
    #[error(transparent)]
    Npy(#[from] NpyError),
    #[error(transparent)]
    Layout(#[from] crate::exec::memory::LayoutError),
    #[error(
        "the run needs about {} besides its buffers ({} of state and {} of headroom for host threads, statistics and reports), and this process could not allocate that much beside the buffers' {} (a memory limit such as `ulimit -v`, or too little free memory); raise the limit, use fewer --threads, a smaller --grid or smaller buffers, or run where more memory is free",
        size(state + headroom),
        size(*state),
        size(*headroom),
        size(*global)
    )]
    HostMemory {
        state: u64,
        headroom: u64,
        global: u64,
    },
    #[error(transparent)]
    Decode(#[from] DecodeError),
    #[error("{0}")]
    Machine(String),
    #[error(
        "precondition failed: {message}: `{condition}` does not hold with {values}; choose values that meet it with `-D NAME=VALUE`"
    )]
    Precondition {
        message: String,
        condition: String,
        values: String,
    },
}

/// The state a run would allocate, part by part
/// ([`super::checks::check_state_size`]); shown
/// when it passes [`MAX_STATE_BYTES`] ([`LoadError::StateTooLarge`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateEstimate {
    pub total: u64,
    pub busy_sms: u64,
    pub per_sm: u64,
    pub boundary: u64,
    pub per_boundary: u64,
    pub cbs: u64,
    /// The caches' line state (GPU machines).
    pub caches: u64,
    /// The units' work queues (SPU machines; shown from 1 MiB).
    pub queues: u64,
    pub instructions: u64,
    pub units: u64,
    pub per_code: u64,
    /// Bytes of `--race-check`'s records in the total (0: off).
    pub race_record: u64,
    /// The buffers as laid out.
    pub global_bytes: u64,
    /// The most buffers and state may take together
    /// ([`super::checks::run_budget`]).
    pub budget: u64,
}

/// The total, what it is made of (boundary units and CBs only where the machine
/// has them), the limit, and what to change.
impl std::fmt::Display for StateEstimate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let without_record = self.total - self.race_record;
        let [total, limit] = sizes_apart(self.total, MAX_STATE_BYTES);
        let record = if self.race_record > 0 {
            " and --race-check's record of every shared word"
        } else {
            ""
        };
        let mut parts = vec![format!(
            "{} with {} each for registers and shared memory{record}",
            counted(self.busy_sms, "busy SM"),
            size(self.per_sm)
        )];
        if self.boundary > 0 {
            parts.push(format!(
                "{} with {} each",
                counted(self.boundary, "boundary unit"),
                size(self.per_boundary)
            ));
        }
        if self.cbs > 0 {
            parts.push(format!("{} of CBs", size(self.cbs)));
        }
        if self.caches > 0 {
            parts.push(format!("{} for the caches' lines", size(self.caches)));
        }
        if self.queues >= 1 << 20 {
            parts.push(format!(
                "{} for the work queues of the launch's passes",
                size(self.queues)
            ));
        }
        parts.push(format!(
            "{} for the counters of {} on {}",
            size(self.per_code),
            counted(self.instructions, "instruction"),
            counted(self.units, "unit")
        ));
        let fix = "use a smaller --grid, or fewer threads, registers or shared memory per block, or a shorter kernel";
        let fix = if self.race_record > 0 && without_record <= MAX_STATE_BYTES {
            format!(
                "run without --race-check (its record takes {}), or {fix}",
                size(self.race_record)
            )
        } else {
            fix.to_string()
        };
        if self.total > MAX_STATE_BYTES {
            return write!(
                f,
                "the machine's state for this run would take {total} ({}); the emulator holds at most {limit} besides global memory: {fix}",
                parts.join(", ")
            );
        }
        // Within the state's own limit, but not beside the buffers.
        let (both, budget) = (
            size(self.global_bytes + self.total),
            limit_size(self.budget),
        );
        write!(
            f,
            "the buffers ({} as laid out) and the machine's state for this run ({}: {}) would take {both} together; a run holds at most {budget} of both (or `memory.global_mib`, where that is larger), so that it stays under 2 GiB: use smaller buffers, or {}",
            size(self.global_bytes),
            size(self.total),
            parts.join(", "),
            fix.strip_prefix("use ").unwrap_or(&fix)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::{LoadError, MAX_STATE_BYTES, RUN_BYTES};

    /// A refusal just above the limit reads two different amounts.
    #[test]
    fn a_state_just_above_the_limit_names_two_different_sizes() {
        let err = LoadError::StateTooLarge(super::StateEstimate {
            total: MAX_STATE_BYTES + 4096,
            busy_sms: 1,
            per_sm: MAX_STATE_BYTES,
            boundary: 0,
            per_boundary: 0,
            cbs: 0,
            caches: 0,
            queues: 0,
            instructions: 1,
            units: 1,
            per_code: 4096,
            race_record: 0,
            global_bytes: 0,
            budget: RUN_BYTES,
        })
        .to_string();
        assert!(
            err.contains("would take 1.0 GiB (1 073 745 920 bytes)")
                && err.contains("at most 1.0 GiB (1 073 741 824 bytes)"),
            "{err}"
        );
        // One of each in the singular; a GPU's missing boundary units and CBs
        // are not listed.
        assert!(
            err.contains("(1 busy SM with") && err.contains("of 1 instruction on 1 unit)"),
            "{err}"
        );
        assert!(!err.contains("boundary") && !err.contains("CBs"), "{err}");
    }

    /// With `--race-check` the refusal says its record counts and that the run
    /// fits without it.
    #[test]
    fn a_state_too_large_with_race_check_suggests_running_without_it() {
        let err = LoadError::StateTooLarge(super::StateEstimate {
            total: 3 * MAX_STATE_BYTES,
            busy_sms: 3600,
            per_sm: 1 << 20,
            boundary: 240,
            per_boundary: 1 << 10,
            cbs: 1 << 20,
            caches: 0,
            queues: 0,
            instructions: 40,
            units: 3840,
            per_code: 1 << 20,
            race_record: 2 * MAX_STATE_BYTES,
            global_bytes: 0,
            budget: RUN_BYTES,
        })
        .to_string();
        assert!(
            err.contains("--race-check's record") && err.contains("run without --race-check"),
            "{err}"
        );
        assert!(
            err.contains("240 boundary units with") && err.contains("of CBs"),
            "{err}"
        );
        // Suggested only where the run would fit without the record.
        let err = LoadError::StateTooLarge(super::StateEstimate {
            total: 3 * MAX_STATE_BYTES,
            busy_sms: 3600,
            per_sm: 1 << 20,
            boundary: 0,
            per_boundary: 0,
            cbs: 0,
            caches: 0,
            queues: 0,
            instructions: 40,
            units: 3600,
            per_code: 1 << 20,
            race_record: MAX_STATE_BYTES,
            global_bytes: 0,
            budget: RUN_BYTES,
        })
        .to_string();
        assert!(
            err.contains("--race-check's record") && !err.contains("without --race-check"),
            "{err}"
        );
    }
}
