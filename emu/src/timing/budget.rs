//! How many warp instructions a run may still issue (`--max-instructions`), and
//! Ctrl-C, checked from inside functional mode, where a warp runs to its next
//! barrier in one call and an endless loop would never return to the grid.

use std::sync::atomic::{AtomicBool, Ordering};

/// Instructions between two looks at the Ctrl-C flag.
const CHECK_EVERY: u32 = 1 << 16;

/// Why the budget stopped a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spent {
    /// The run issued `--max-instructions` warp instructions.
    Instructions,
    /// Ctrl-C.
    Interrupted,
}

/// The instructions a run may still issue.
#[derive(Debug)]
pub struct Budget {
    left: u64,
    interrupt: Option<&'static AtomicBool>,
    until_check: u32,
    /// Set when the budget stopped issue; the grid turns it into a stop.
    pub spent: Option<Spent>,
}

impl Budget {
    pub fn new(max_instructions: u64, interrupt: Option<&'static AtomicBool>) -> Budget {
        Budget {
            left: max_instructions,
            interrupt,
            until_check: CHECK_EVERY,
            spent: None,
        }
    }

    /// Takes one instruction; false (and [`Budget::spent`] set) when none are left
    /// or Ctrl-C was pressed.
    #[inline]
    pub fn take(&mut self) -> bool {
        if self.left == 0 {
            self.spent = Some(Spent::Instructions);
            return false;
        }
        self.left -= 1;
        self.until_check -= 1;
        if self.until_check == 0 {
            self.until_check = CHECK_EVERY;
            if self.interrupt.is_some_and(|f| f.load(Ordering::Relaxed)) {
                self.spent = Some(Spent::Interrupted);
                return false;
            }
        }
        true
    }
}
