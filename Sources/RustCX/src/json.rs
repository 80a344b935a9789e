//! Just enough JSON for the line protocol's requests and replies, with no crate from a
//! registry: strings written with their escapes, and a reply's top-level fields read.
//! Replies are the shell's own (one flat object per line, `output` a string holding the
//! plugin's JSON): this is not a general parser.

/// `text` as a quoted JSON string.
pub fn string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// An object of string members, in order: `{"op":"call","device":"d1",…}`.
pub fn object(members: &[(&str, &str)]) -> String {
    let fields: Vec<String> = members.iter().map(|(name, value)| format!("{}:{}", string(name), string(value))).collect();
    format!("{{{}}}", fields.join(","))
}

/// The string member `name` at the top level of a flat object (`"output":"…"`), unescaped.
pub fn field(object: &str, name: &str) -> Option<String> {
    let start = value_start(object, name)?;
    let rest = object[start..].strip_prefix('"')?;
    let mut out = String::new();
    let mut chars = rest.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return Some(out),
            '\\' => match chars.next()? {
                'n' => out.push('\n'),
                'r' => out.push('\r'),
                't' => out.push('\t'),
                'b' => out.push('\u{8}'),
                'f' => out.push('\u{c}'),
                'u' => {
                    let high = hex4(&mut chars)?;
                    let code = if (0xD800..0xDC00).contains(&high) {
                        // A surrogate pair: \uD83C\uDFAB.
                        if chars.next()? != '\\' || chars.next()? != 'u' {
                            return None;
                        }
                        let low = hex4(&mut chars)?;
                        0x10000 + ((high - 0xD800) << 10) + (low.checked_sub(0xDC00)?)
                    } else {
                        high
                    };
                    out.push(char::from_u32(code)?);
                }
                other => out.push(other), // \" \\ \/
            },
            c => out.push(c),
        }
    }
    None
}

/// The boolean member `name` at the top level of a flat object (`"ok":true`).
pub fn flag(object: &str, name: &str) -> Option<bool> {
    let start = value_start(object, name)?;
    let rest = &object[start..];
    if rest.starts_with("true") {
        Some(true)
    } else if rest.starts_with("false") {
        Some(false)
    } else {
        None
    }
}

/// Where the value of the top-level member `name` begins: the shell writes its keys
/// compactly (`"name":value`), and a key's quoted text cannot occur inside a string
/// value, whose quotes are escaped.
fn value_start(object: &str, name: &str) -> Option<usize> {
    let key = format!("{}:", string(name));
    let mut depth = 0;
    let mut in_string = false;
    let mut escaped = false;
    for (index, c) in object.char_indices() {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        match c {
            '{' | '[' => depth += 1,
            '}' | ']' => depth -= 1,
            '"' if depth == 1 && object[index..].starts_with(&key) => return Some(index + key.len()),
            '"' => in_string = true,
            _ => {}
        }
    }
    None
}

fn hex4(chars: &mut std::str::Chars<'_>) -> Option<u32> {
    let mut value = 0;
    for _ in 0..4 {
        value = value * 16 + chars.next()?.to_digit(16)?;
    }
    Some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_round_trip_through_escapes() {
        let text = "a \"quoted\" \\ line\nwith\ttabs, \u{1} and 🎫";
        let object = object(&[("output", text)]);
        assert_eq!(field(&object, "output").as_deref(), Some(text));
    }

    #[test]
    fn only_top_level_members_are_read() {
        let reply = r#"{"reply":null,"ok":false,"output":"{\"ok\":true,\"token\":\"t\"}"}"#;
        assert_eq!(flag(reply, "ok"), Some(false));
        assert_eq!(field(reply, "output").as_deref(), Some(r#"{"ok":true,"token":"t"}"#));
        assert_eq!(field(reply, "token"), None);
        assert_eq!(field(r#"{"a":{"device":"x"},"device":"d2"}"#, "device").as_deref(), Some("d2"));
        assert_eq!(field(r#"{"s":"\ud83c\udfab"}"#, "s").as_deref(), Some("🎫"));
    }
}
