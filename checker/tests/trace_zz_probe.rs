#[test]
fn probe() {
    for x in [r#"{"#bigint":"1"}"#, r#"{"#set":[]}"#, r#"{"#map":[]}"#, r#"[]"#, r#""s""#, r#"{"a":{"#bigint":"1"}}"#, r#"{"tag":"None","value":{}}"#, "true"] {
        let doc = format!(r##"{{"#meta":{{}},"vars":["x"],"states":[{{"#meta":{{"index":0}},"x":{x}}}]}}"##);
        let r = itf::trace_from_str::<itf::Value>(&doc);
        println!("{x}: {:?}", r.map(|_| ()));
    }
}
