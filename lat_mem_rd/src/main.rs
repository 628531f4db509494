//! socbench `lat_mem_rd`: see README.md in this folder.

fn main() {
    eprintln!("lat_mem_rd: not built yet in this revision");
    std::process::exit(3);
}
