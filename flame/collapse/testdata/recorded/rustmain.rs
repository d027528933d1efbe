// A CPU-bound Rust program with generics, closures and trait methods,
// profiled by TestInfernoRecorded.
use std::collections::HashMap;
use std::time::{Duration, Instant};

trait Step {
    fn step(&mut self, x: u64) -> u64;
}

struct Mixer<T> {
    seen: HashMap<T, u64>,
}

impl<T: std::hash::Hash + Eq + Clone> Mixer<T> {
    #[inline(never)]
    fn mix(&mut self, key: &T, f: &dyn Fn(u64) -> u64) -> u64 {
        let mut s = 0u64;
        for i in 0..20000u64 {
            s = s.wrapping_mul(31).wrapping_add(f(i));
        }
        *self.seen.entry(key.clone()).or_insert(0) += s;
        s
    }
}

impl Step for Mixer<String> {
    #[inline(never)]
    fn step(&mut self, x: u64) -> u64 {
        let key = format!("k{}", x % 5);
        self.mix(&key, &|i| i ^ x)
    }
}

fn main() {
    let mut m = Mixer { seen: HashMap::new() };
    let start = Instant::now();
    let mut total = 0u64;
    while start.elapsed() < Duration::from_millis(700) {
        total = total.wrapping_add(m.step(total));
    }
    println!("{}", total != 42);
}
