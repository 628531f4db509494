//! socbench `bw_mem`: see README.md in this folder.

fn main() {
    eprintln!("bw_mem: not built yet in this revision");
    std::process::exit(3);
}
