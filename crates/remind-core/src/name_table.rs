//! One table of names per enum that crosses a boundary as text (a settings value, a
//! page control, a command-line flag), so each name is spelled once and read both
//! ways from the same place.

/// Each value of `T` beside its name.
#[derive(Debug)]
pub struct NameTable<T: 'static>(pub &'static [(T, &'static str)]);

impl<T: Copy + PartialEq> NameTable<T> {
    /// The name of `value`; every value of `T` is in its table (each table's test
    /// walks the enum), so the empty name is never seen.
    pub fn name(&self, value: T) -> &'static str {
        self.0
            .iter()
            .find(|(v, _)| *v == value)
            .map_or("", |(_, name)| name)
    }

    /// The value `name` names, ignoring surrounding blanks.
    pub fn find(&self, name: &str) -> Option<T> {
        let name = name.trim();
        self.0.iter().find(|(_, n)| *n == name).map(|(v, _)| *v)
    }

    pub fn values(&self) -> impl Iterator<Item = T> + '_ {
        self.0.iter().map(|(v, _)| *v)
    }

    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.0.iter().map(|(_, n)| *n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Copy, Debug, PartialEq)]
    enum Colour {
        Red,
        Blue,
    }

    const COLOURS: NameTable<Colour> = NameTable(&[(Colour::Red, "red"), (Colour::Blue, "blue")]);

    #[test]
    fn a_name_table_reads_both_ways() {
        assert_eq!(COLOURS.name(Colour::Blue), "blue");
        assert_eq!(COLOURS.find(" red "), Some(Colour::Red));
        assert_eq!(COLOURS.find("green"), None);
        assert_eq!(COLOURS.names().collect::<Vec<_>>(), ["red", "blue"]);
        assert_eq!(COLOURS.values().count(), 2);
    }
}
