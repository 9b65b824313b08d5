//! The optimization parameters as `apply` flags, generated from the registry's schemas: one flag
//! per distinct parameter flag name, its help listing what it means to each optimization that
//! takes it. Values are collected as written and read by the schema ([`crate::transforms::params`]).

use crate::transforms::registry;
use clap::{Arg, ArgAction, ArgMatches, Command};

/// Every parameter flag given, in registry order, with its values in command-line order (a
/// switch has one value, `true`).
#[derive(Clone, Debug, Default)]
pub struct ParamFlags {
    pub values: Vec<(String, Vec<String>)>,
}

/// A distinct parameter flag of the registry.
struct Flag {
    name: &'static str,
    switch: bool,
    value_name: String,
    help: String,
}

fn flags() -> Vec<Flag> {
    let mut out: Vec<Flag> = Vec::new();
    for opt in registry::ALL {
        for p in opt.meta().params {
            let line = format!("{}: {}", opt.meta().name, p.doc);
            match out.iter_mut().find(|f| f.name == p.flag) {
                Some(f) => {
                    f.help.push_str("; ");
                    f.help.push_str(&line);
                }
                None => out.push(Flag {
                    name: p.flag,
                    switch: p.is_switch(),
                    value_name: p.key.to_uppercase(),
                    help: line,
                }),
            }
        }
    }
    out
}

impl clap::FromArgMatches for ParamFlags {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let mut values = Vec::new();
        for f in flags() {
            if f.switch {
                if m.get_flag(f.name) {
                    values.push((f.name.to_string(), vec!["true".to_string()]));
                }
            } else if let Some(vs) = m.get_many::<String>(f.name) {
                values.push((f.name.to_string(), vs.cloned().collect()));
            }
        }
        Ok(ParamFlags { values })
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

impl clap::Args for ParamFlags {
    fn augment_args(mut cmd: Command) -> Command {
        for f in flags() {
            let arg = Arg::new(f.name).long(f.name).help(f.help).help_heading(
                "Optimization parameters (each --opt takes the next value of each flag it uses)",
            );
            cmd = cmd.arg(if f.switch {
                arg.action(ArgAction::SetTrue)
            } else {
                arg.action(ArgAction::Append).value_name(f.value_name)
            });
        }
        cmd
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}
