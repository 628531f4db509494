//! socbench `dto`: see README.md in this folder.

fn main() {
    eprintln!("dto: not built yet in this revision");
    std::process::exit(3);
}
