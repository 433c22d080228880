//! C99 inline definitions that nothing defines externally.
//!
//! A function defined `inline` (neither `static` nor `extern`) in a translation unit whose
//! declarations of it all say `inline` is only an *inline definition* (C11 6.7.4p7): the unit
//! provides no symbol for it, and a call the compiler does not inline needs an external
//! definition from somewhere else. Compilers of the PGI lineage, and GCC's `gnu89` inline
//! rules, emit one anyway, and programs written for them (NPB EP's `randlc_ep`) rely on it. When
//! no unit of the program gives the function an external definition, the first unit that
//! defines it inline gets a file-scope `extern` declaration, which makes its definition the
//! external one; nothing changes for a program that does provide one.

use std::collections::{BTreeMap, HashSet};

use crate::front::ast::{DeclSpecs, DerivedType, Declarator, ExternalDecl, StorageClass, TranslationUnit};

/// Per translation unit (`tu`), the functions it must declare `extern` at its end.
pub fn missing_external_definitions(units: &[TranslationUnit]) -> BTreeMap<u32, Vec<String>> {
    let mut external: HashSet<&str> = HashSet::new();
    let mut inline_only: Vec<(u32, &str)> = Vec::new();
    for unit in units {
        // Declarations of the unit that make its definition of a name external.
        let mut makes_external: HashSet<&str> = HashSet::new();
        let mut defined_inline: Vec<&str> = Vec::new();
        for item in &unit.items {
            match item {
                ExternalDecl::Function(f) => {
                    let Some(name) = f.declarator.name.as_deref() else { continue };
                    match f.specs.storage {
                        Some(StorageClass::Static) => {}
                        _ if !f.specs.is_inline || f.specs.storage == Some(StorageClass::Extern) => {
                            external.insert(name);
                        }
                        _ => defined_inline.push(name),
                    }
                }
                ExternalDecl::Declaration(d) => {
                    for init in &d.declarators {
                        if let Some(name) = function_name(&init.declarator)
                            && external_declaration(&d.specs)
                        {
                            makes_external.insert(name);
                        }
                    }
                }
                ExternalDecl::Directive(_) => {}
            }
        }
        for name in defined_inline {
            if makes_external.contains(name) {
                external.insert(name);
            } else {
                inline_only.push((unit.tu, name));
            }
        }
    }
    let mut out: BTreeMap<u32, Vec<String>> = BTreeMap::new();
    let mut given: HashSet<&str> = HashSet::new();
    for (tu, name) in inline_only {
        if !external.contains(name) && given.insert(name) {
            out.entry(tu).or_default().push(name.to_string());
        }
    }
    out
}

/// The name a file-scope declarator declares when it declares a function.
fn function_name(d: &Declarator) -> Option<&str> {
    match d.derived.first() {
        Some(DerivedType::Function { .. }) => d.name.as_deref(),
        _ => None,
    }
}

/// A file-scope function declaration that, with a definition in the same unit, makes that
/// definition external: one with `extern`, or without `inline` (and not `static`/`typedef`).
fn external_declaration(specs: &DeclSpecs) -> bool {
    match specs.storage {
        Some(StorageClass::Extern) => true,
        Some(StorageClass::Static | StorageClass::Typedef) => false,
        _ => !specs.is_inline,
    }
}

/// The text that gives `name` its external definition in the unit that defines it inline.
pub fn external_declaration_text(name: &str) -> String {
    format!("extern __typeof__({name}) {name};\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parses one source per unit and gives the names each unit must declare `extern`.
    fn missing(sources: &[&str]) -> Vec<(u32, Vec<String>)> {
        let parsed = crate::front::parse_test_units(sources);
        let tus: Vec<u32> = parsed.units.iter().map(|u| u.tu).collect();
        missing_external_definitions(&parsed.units).into_iter().map(|(tu, names)| (tus.iter().position(|&t| t == tu).unwrap() as u32, names)).collect()
    }

    #[test]
    fn an_inline_only_definition_gets_an_external_one() {
        assert_eq!(missing(&["inline double twice(double x) { return 2 * x; }\nint main(void) { return twice(0); }\n"]), vec![(0, vec!["twice".to_string()])]);
    }

    #[test]
    fn definitions_that_are_already_external_or_internal_are_left_alone() {
        for text in [
            "double twice(double x);\ninline double twice(double x) { return 2 * x; }\n",
            "extern inline double twice(double x) { return 2 * x; }\n",
            "static inline double twice(double x) { return 2 * x; }\n",
            "double twice(double x) { return 2 * x; }\n",
        ] {
            assert_eq!(missing(&[text]), vec![], "{text}");
        }
    }

    #[test]
    fn the_first_of_several_inline_definitions_becomes_external_unless_one_unit_provides_it() {
        let inline = "inline int sq(int x) { return x * x; }\n";
        assert_eq!(missing(&[inline, inline]), vec![(0, vec!["sq".to_string()])]);
        let provides = "inline int sq(int x) { return x * x; }\nextern int sq(int x);\n";
        assert_eq!(missing(&[inline, provides]), vec![]);
    }
}
