//! Small text helpers shared by the reports: grouped thousands, MiB, Markdown escapes.

/// `word` → `Word`.
pub(crate) fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(first) => first.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// `on` or `off`.
pub(crate) fn on_off(b: bool) -> &'static str {
    if b {
        "on"
    } else {
        "off"
    }
}

/// `yes` or `no`.
pub(crate) fn yes_no(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

/// `1234567` → `1,234,567`.
pub(crate) fn group(n: u64) -> String {
    let digits = n.to_string();
    let head = match digits.len() % 3 {
        0 => 3,
        r => r,
    };
    let (first, mut rest) = digits.split_at(head);
    let mut out = first.to_string();
    while !rest.is_empty() {
        out.push(',');
        out.push_str(&rest[..3]);
        rest = &rest[3..];
    }
    out
}

/// Bytes in MiB, one decimal.
pub(crate) fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

/// Escapes `|` so a value stays in its Markdown table cell.
pub(crate) fn escape(s: &str) -> String {
    s.replace('|', "\\|")
}

#[cfg(test)]
mod tests {
    use super::group;

    #[test]
    fn thousands_are_grouped() {
        assert_eq!(group(0), "0");
        assert_eq!(group(999), "999");
        assert_eq!(group(1000), "1,000");
        assert_eq!(group(123_456), "123,456");
        assert_eq!(group(1_234_567), "1,234,567");
    }
}
