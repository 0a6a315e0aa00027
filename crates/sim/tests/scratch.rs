mod common;
use rttlab_sim::Network;
#[test]
fn scratch() {
    let text = std::fs::read_to_string("/tmp/mix.toml").unwrap();
    let mut net = Network::new(&common::scenario(&text)).unwrap();
    net.run();
    let tables = net.tables();
    for name in ["jobs", "transfers", "ports"] {
        let t = &tables.iter().find(|(n, _)| *n == name).unwrap().1;
        let json = rttlab_sim::table::tables_json(&vec![(name, t.clone())]).0;
        println!("{name}: {}", json[name]);
    }
}
