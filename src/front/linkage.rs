//! C's linkage of the functions a program defines: which definition a call of a name means in
//! each translation unit. A function declared `static` is known only in its own unit, where it
//! hides any external function of that name; every other definition is the program's one
//! external function of that name. The lowering (which device function a kernel calls) and the
//! host back end (which calls launch kernels) both resolve calls here, so two files' `static`
//! functions of one name stay two functions everywhere.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use crate::front::ast::{DerivedType, ExternalDecl, FunctionDef, StorageClass, TranslationUnit};
use crate::source::SourceSet;

/// One function of the program: its name, and the unit of a `static` one.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FunctionKey {
    pub name: String,
    /// The translation unit of a `static` function; `None` for an external one.
    pub unit: Option<u32>,
}

/// Every function the program defines, by [`FunctionKey`].
#[derive(Default)]
pub struct Definitions<'u> {
    /// The definition of each function (see [`Definitions::new`] for a name defined twice).
    defs: HashMap<FunctionKey, &'u FunctionDef>,
    /// The keys in the order of their first definitions, for walks that must be deterministic.
    order: Vec<FunctionKey>,
    /// (unit, name) for each name a unit's file-scope declarations make `static`.
    internal: HashSet<(u32, &'u str)>,
    /// (unit, name) for each variable a unit's file-scope declarations make `static`.
    static_objects: HashSet<(u32, &'u str)>,
    /// How many functions of each name the program has (its statics and its external one).
    same_named: HashMap<&'u str, usize>,
    /// External functions defined (not `inline`) in two units, which the linker refuses: the
    /// later definition, then the one kept.
    pub duplicates: Vec<(&'u FunctionDef, &'u FunctionDef)>,
}

fn function_name(f: &FunctionDef) -> Option<&str> {
    f.declarator.name.as_deref()
}

/// An `inline` definition that is not `extern`: C lets several units have one (C11 6.7.4p7),
/// and `c_inline` makes sure one of them is external when no other definition is.
fn inline_definition(f: &FunctionDef) -> bool {
    f.specs.is_inline && f.specs.storage != Some(StorageClass::Extern)
}

impl<'u> Definitions<'u> {
    /// A function is `static` when any of its unit's file-scope declarations says so (C11
    /// 6.2.2p3; a later declaration without `static` keeps the linkage of the first). Of two
    /// definitions of one external function the first is kept, unless it is an `inline`
    /// definition and the later one is not (that one is what the linker takes).
    pub fn new(units: &'u [TranslationUnit]) -> Definitions<'u> {
        let mut d = Definitions::default();
        for unit in units {
            for item in &unit.items {
                match item {
                    ExternalDecl::Function(f) if f.specs.storage == Some(StorageClass::Static) => {
                        if let Some(name) = function_name(f) {
                            d.internal.insert((unit.tu, name));
                        }
                    }
                    ExternalDecl::Declaration(decl) if decl.specs.storage == Some(StorageClass::Static) => {
                        for init in &decl.declarators {
                            let Some(name) = &init.declarator.name else { continue };
                            if let Some(DerivedType::Function { .. }) = init.declarator.derived.first() {
                                d.internal.insert((unit.tu, name));
                            } else {
                                d.static_objects.insert((unit.tu, name));
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        for unit in units {
            for item in &unit.items {
                let ExternalDecl::Function(f) = item else { continue };
                let Some(name) = function_name(f) else { continue };
                let key = d.key_of_name(name, unit.tu);
                match d.defs.get(&key).copied() {
                    None => {
                        *d.same_named.entry(name).or_default() += 1;
                        d.order.push(key.clone());
                        d.defs.insert(key, f);
                    }
                    Some(kept) if key.unit.is_none() && kept.span.tu != f.span.tu => {
                        if inline_definition(kept) && !inline_definition(f) {
                            d.defs.insert(key, f);
                        } else if !inline_definition(kept) && !inline_definition(f) {
                            d.duplicates.push((f, kept));
                        }
                    }
                    // A second definition in one unit is the C compiler's error to report.
                    Some(_) => {}
                }
            }
        }
        d
    }

    fn key_of_name(&self, name: &str, unit: u32) -> FunctionKey {
        let unit = self.internal.contains(&(unit, name)).then_some(unit);
        FunctionKey { name: name.to_string(), unit }
    }

    /// The function a definition defines.
    pub fn key_of(&self, f: &FunctionDef) -> Option<FunctionKey> {
        Some(self.key_of_name(function_name(f)?, f.span.tu))
    }

    /// Whether `unit` declares a `static` variable `name` at file scope.
    pub fn static_object(&self, unit: u32, name: &str) -> bool {
        self.static_objects.contains(&(unit, name))
    }

    /// The function a call of `name` in unit `unit` calls: the unit's `static` one, else the
    /// external one; `None` when the program defines neither (a library function, or a `static`
    /// function the unit declares and never defines).
    pub fn resolve(&self, name: &str, unit: u32) -> Option<FunctionKey> {
        let key = self.key_of_name(name, unit);
        self.defs.contains_key(&key).then_some(key)
    }

    /// The definition of a function.
    pub fn get(&self, key: &FunctionKey) -> Option<&'u FunctionDef> {
        self.defs.get(key).copied()
    }

    /// Whether `f` is the definition the program keeps for its function (not a second one).
    pub fn is_kept(&self, f: &FunctionDef) -> bool {
        self.key_of(f).and_then(|k| self.get(&k)).is_some_and(|kept| std::ptr::eq(kept, f))
    }

    /// Every function with its kept definition, in definition order.
    pub fn iter(&self) -> impl Iterator<Item = (&FunctionKey, &'u FunctionDef)> + '_ {
        self.order.iter().map(|k| (k, self.defs[k]))
    }

    /// The name to show for a function (IR text, device code): its C name, with `@file` after
    /// a `static` one's when the program has other functions of that name (the file's name,
    /// or its path when two units' files share the name).
    pub fn display_name(&self, key: &FunctionKey, sources: &SourceSet) -> String {
        let Some(unit) = key.unit.filter(|_| self.same_named.get(key.name.as_str()).copied().unwrap_or(0) > 1) else {
            return key.name.clone();
        };
        let path_of = |u: usize| sources.units.get(u).map(|s| s.path.as_path()).unwrap_or(Path::new(""));
        let path = path_of(unit as usize);
        let file = path.file_name().map(Path::new).unwrap_or(path);
        let shared = (0..sources.units.len()).any(|u| u != unit as usize && path_of(u).file_name() == path.file_name());
        let shown = if shared { path } else { file };
        format!("{}@{}", key.name, shown.display())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::front::ParsedProgram;

    fn parse(sources: &[&str]) -> ParsedProgram {
        crate::front::parse_test_units(sources)
    }

    #[test]
    fn a_call_means_its_units_static_function_else_the_external_one() {
        let p = parse(&[
            "static double scale(double x) { return 2 * x; }\ndouble shift(double x) { return x + 1; }\n",
            "static double scale(double x);\ndouble scale(double x) { return 3 * x; }\n",
            "double scale(double x);\nint main(void) { return 0; }\n",
        ]);
        let d = Definitions::new(&p.units);
        let key = |name: &str, unit| FunctionKey { name: name.to_string(), unit };
        assert_eq!(d.resolve("scale", 0), Some(key("scale", Some(0))));
        // A definition without `static` after a `static` declaration is still internal.
        assert_eq!(d.resolve("scale", 1), Some(key("scale", Some(1))));
        // No unit defines an external `scale`: the third unit's call is the linker's problem.
        assert_eq!(d.resolve("scale", 2), None);
        assert_eq!(d.resolve("shift", 2), Some(key("shift", None)));
        assert_eq!(d.resolve("printf", 0), None);
        assert!(d.duplicates.is_empty());
        assert_eq!(d.display_name(&key("scale", Some(1)), &p.sources), "scale@unit1.c");
        assert_eq!(d.display_name(&key("shift", None), &p.sources), "shift");
    }

    #[test]
    fn a_static_function_alone_of_its_name_keeps_its_name() {
        let p = parse(&["static double scale(double x) { return 2 * x; }\n", "int main(void) { return 0; }\n"]);
        let d = Definitions::new(&p.units);
        let key = FunctionKey { name: "scale".to_string(), unit: Some(0) };
        assert_eq!(d.display_name(&key, &p.sources), "scale");
    }

    #[test]
    fn two_external_definitions_are_duplicates_and_inline_ones_are_not() {
        let p = parse(&["double f(double x) { return x; }\n", "double f(double x) { return -x; }\n"]);
        let d = Definitions::new(&p.units);
        assert_eq!(d.duplicates.len(), 1);
        assert_eq!(d.duplicates[0].0.span.tu, 1);
        let inline = "inline int sq(int x) { return x * x; }\n";
        let p = parse(&[inline, "int sq(int x) { return x * x; }\n", inline]);
        let d = Definitions::new(&p.units);
        assert!(d.duplicates.is_empty());
        // The definition that is not `inline` is the external one.
        let kept = d.get(&FunctionKey { name: "sq".to_string(), unit: None }).expect("sq is defined");
        assert_eq!(kept.span.tu, 1);
    }
}
