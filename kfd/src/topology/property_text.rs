//! The text format of every sysfs topology file: one `name value` pair per line, the value an
//! unsigned decimal (`%u` or `%llu` in `kfd_topology.c`), except the cache `sibling_map`, a
//! comma-separated list of 0/1 (kfd.md §2.1). Readers ignore names they do not know, so the
//! parser keeps every pair and the typed readers take what they understand.

use std::fmt;

/// One value in a properties file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PropertyValue {
    /// An unsigned decimal number.
    Number(u64),
    /// A comma-separated list of numbers (the cache `sibling_map`).
    List(Vec<u64>),
}

impl fmt::Display for PropertyValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Number(n) => write!(f, "{n}"),
            Self::List(items) => {
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{item}")?;
                }
                Ok(())
            }
        }
    }
}

/// Why a properties file could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PropertyTextError {
    /// The file is not UTF-8 text.
    #[error("not UTF-8 text")]
    NotText,
    /// A line is not `name value`.
    #[error("line {line}: {reason}: {text:?}")]
    Malformed {
        /// 1-based line number.
        line: usize,
        /// The offending line (truncated to 80 characters).
        text: String,
        /// What is wrong with it.
        reason: &'static str,
    },
}

/// A parsed properties file: the pairs in file order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PropertyText {
    entries: Vec<(String, PropertyValue)>,
}

impl PropertyText {
    /// Parse the bytes of a properties file. Blank lines are skipped; anything else that is not
    /// `name value` is an error naming the line.
    pub fn parse(bytes: &[u8]) -> Result<Self, PropertyTextError> {
        let text = std::str::from_utf8(bytes).map_err(|_| PropertyTextError::NotText)?;
        let mut entries = Vec::new();
        for (index, line) in text.lines().enumerate() {
            let trimmed = line.trim();
            if trimmed.is_empty() {
                continue;
            }
            let malformed = |reason| PropertyTextError::Malformed {
                line: index + 1,
                text: trimmed.chars().take(80).collect(),
                reason,
            };
            let mut words = trimmed.split_whitespace();
            let (Some(name), Some(value)) = (words.next(), words.next()) else {
                return Err(malformed("expected `name value`"));
            };
            if words.next().is_some() {
                return Err(malformed("more than one value"));
            }
            let value = if value.contains(',') {
                let items = value
                    .split(',')
                    .filter(|item| !item.is_empty())
                    .map(str::parse::<u64>)
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|_| malformed("list item is not an unsigned decimal"))?;
                PropertyValue::List(items)
            } else {
                PropertyValue::Number(
                    value
                        .parse::<u64>()
                        .map_err(|_| malformed("value is not an unsigned decimal"))?,
                )
            };
            entries.push((name.to_owned(), value));
        }
        Ok(Self { entries })
    }

    /// Every pair, in file order.
    pub fn entries(&self) -> &[(String, PropertyValue)] {
        &self.entries
    }

    /// The numeric value of `name` (the last one, should it repeat).
    pub fn number(&self, name: &str) -> Option<u64> {
        self.entries.iter().rev().find_map(|(n, v)| match v {
            PropertyValue::Number(value) if n == name => Some(*value),
            _ => None,
        })
    }

    /// The list value of `name`.
    pub fn list(&self, name: &str) -> Option<&[u64]> {
        self.entries.iter().rev().find_map(|(n, v)| match v {
            PropertyValue::List(items) if n == name => Some(items.as_slice()),
            // A one-element sibling map has no comma and parses as a number.
            _ => None,
        })
    }

    /// The pairs whose names are not in `known`, for reporting.
    pub fn unknown(&self, known: &[&str]) -> Vec<(String, PropertyValue)> {
        self.entries
            .iter()
            .filter(|(name, _)| !known.contains(&name.as_str()))
            .cloned()
            .collect()
    }
}

/// Parse a one-number file (`gpu_id`, `generation_id`, `drm_render_minor` style).
pub(crate) fn parse_single_number(bytes: &[u8]) -> Result<u64, PropertyTextError> {
    let text = std::str::from_utf8(bytes).map_err(|_| PropertyTextError::NotText)?;
    let trimmed = text.trim();
    trimmed
        .parse::<u64>()
        .map_err(|_| PropertyTextError::Malformed {
            line: 1,
            text: trimmed.chars().take(80).collect(),
            reason: "expected one unsigned decimal",
        })
}

/// A Rust type a property value converts to.
pub(crate) trait FromProperty: Sized {
    /// Take `name` from `text`; an absent name gives the type's "absent" value.
    fn read_property(text: &PropertyText, name: &str) -> Result<Self, &'static str>;
}

impl FromProperty for u64 {
    fn read_property(text: &PropertyText, name: &str) -> Result<Self, &'static str> {
        Ok(text.number(name).unwrap_or(0))
    }
}

impl FromProperty for u32 {
    fn read_property(text: &PropertyText, name: &str) -> Result<Self, &'static str> {
        Ok(Option::<u32>::read_property(text, name)?.unwrap_or(0))
    }
}

impl FromProperty for Option<u64> {
    fn read_property(text: &PropertyText, name: &str) -> Result<Self, &'static str> {
        Ok(text.number(name))
    }
}

impl FromProperty for Option<u32> {
    fn read_property(text: &PropertyText, name: &str) -> Result<Self, &'static str> {
        text.number(name)
            .map(|value| u32::try_from(value).map_err(|_| "value does not fit 32 bits"))
            .transpose()
    }
}

/// Declare a struct read from a properties file: one field per known name, plus the pairs
/// this driver does not know.
macro_rules! typed_properties {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $( $(#[$fmeta:meta])* $field:ident: $ty:ty = $key:expr, )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Debug, Default, PartialEq, Eq)]
        pub struct $name {
            $( $(#[$fmeta])* pub $field: $ty, )*
            /// Pairs this driver does not know, in file order (reported, never an error).
            pub unknown: Vec<(String, $crate::topology::PropertyValue)>,
        }

        impl $name {
            /// The names this struct reads.
            pub const KNOWN: &'static [&'static str] = &[$($key),*];

            /// Read the known names from `text`; a value too wide for its field is an error
            /// naming the property.
            pub fn from_text(
                text: &$crate::topology::PropertyText,
            ) -> Result<Self, (&'static str, &'static str)> {
                use $crate::topology::property_text::FromProperty as _;
                Ok(Self {
                    $( $field: <$ty>::read_property(text, $key).map_err(|why| ($key, why))?, )*
                    unknown: text.unknown(Self::KNOWN),
                })
            }
        }
    };
}

pub(crate) use typed_properties;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_in_order_with_unknown_names_kept() {
        let text =
            PropertyText::parse(b"cpu_cores_count 0\nsimd_count 480\n\nnew_thing 7\n").unwrap();
        assert_eq!(text.number("simd_count"), Some(480));
        assert_eq!(text.number("absent"), None);
        assert_eq!(
            text.unknown(&["cpu_cores_count", "simd_count"]),
            vec![("new_thing".to_owned(), PropertyValue::Number(7))]
        );
    }

    #[test]
    fn sibling_map_is_a_list() {
        let text = PropertyText::parse(b"level 1\nsibling_map 1,0,0,1\n").unwrap();
        assert_eq!(text.list("sibling_map"), Some(&[1, 0, 0, 1][..]));
        assert_eq!(text.number("sibling_map"), None);
        assert_eq!(
            PropertyValue::List(vec![1, 0, 1]).to_string(),
            "1,0,1".to_owned()
        );
    }

    #[test]
    fn sixty_four_bit_values() {
        let text = PropertyText::parse(b"unique_id 18446744073709551615\n").unwrap();
        assert_eq!(text.number("unique_id"), Some(u64::MAX));
    }

    #[test]
    fn malformed_lines_name_the_line() {
        assert_eq!(
            PropertyText::parse(b"simd_count 4\nsimd_per_cu\n"),
            Err(PropertyTextError::Malformed {
                line: 2,
                text: "simd_per_cu".to_owned(),
                reason: "expected `name value`",
            })
        );
        assert!(matches!(
            PropertyText::parse(b"simd_count -4\n"),
            Err(PropertyTextError::Malformed { line: 1, .. })
        ));
        assert!(matches!(
            PropertyText::parse(b"simd_count 4 5\n"),
            Err(PropertyTextError::Malformed {
                reason: "more than one value",
                ..
            })
        ));
        assert!(matches!(
            PropertyText::parse(b"unique_id 18446744073709551616\n"),
            Err(PropertyTextError::Malformed { .. })
        ));
        assert_eq!(
            PropertyText::parse(&[0xff, 0xfe]),
            Err(PropertyTextError::NotText)
        );
    }

    #[test]
    fn single_numbers() {
        assert_eq!(parse_single_number(b"42700\n"), Ok(42700));
        assert!(parse_single_number(b"").is_err());
        assert!(parse_single_number(b"12 13").is_err());
    }
}
