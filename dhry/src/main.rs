//! socbench `dhry`: see README.md in this folder.

fn main() {
    eprintln!("dhry: not built yet in this revision");
    std::process::exit(3);
}
