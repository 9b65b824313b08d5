//! Rounds: several independent loop steps applied on one parse (see [`independent_batch`]).
//! The result is byte-identical to applying them one step at a time (tests/opt_merge.rs checks
//! it on every fixture); rounds only save parses.

use super::*;

/// The next pending annotations (indices into `pend`) that can be applied as one round on one
/// parse, with the same output as one step each.
///
/// Re-parsing the whole file twice per step dominates the cost of a file with many annotated
/// loops. Rewrites of a whole construct (unrolling, merging: `Meta::exclusive`) edit only the
/// loop they are applied to, and what they read of the rest of the program (callee contracts,
/// pure functions) they never change; so steps in different methods do not see each other, and
/// running them on the same text gives what running them one after the other gives. A round
/// takes at most one step per method (a later step in the same method must see the earlier
/// one's output), and only steps of the kind that comes next:
/// * a kind that allocates no names (unrolling) takes the first pending step of every method,
///   wherever it sits in the order (the order of independent steps changes nothing but the
///   order of their diagnostics);
/// * one that does (merging) allocates fresh names in application order, so its round is a
///   prefix of the order; it also ends after a loop whose body carries annotations of the kind
///   (the copies become new steps, which may come next in the order).
pub(super) fn independent_batch(parsed: &Parsed, pend: &[Pending]) -> Vec<usize> {
    let Some(kind) = pend.first().map(|p| p.opt) else {
        return Vec::new();
    };
    if !kind.meta().exclusive || !kind.meta().sites.contains(&SiteKind::Loop) {
        return Vec::new();
    }
    let names_fresh = kind.meta().allocates_names;
    let all = sites(&parsed.program);
    let mut methods: Vec<(Option<&str>, &str)> = Vec::new();
    let mut out = Vec::new();
    for (i, p) in pend.iter().enumerate() {
        let site = &p.site;
        let key = (site.class.as_deref(), site.method.as_str());
        let seen = methods.contains(&key);
        if p.opt != kind || (names_fresh && seen) {
            break;
        }
        methods.push(key);
        if seen {
            continue;
        }
        out.push(i);
        let carries = all.iter().any(|s| {
            site.span.contains(s.span)
                && !s.keyword.same_place(site.keyword)
                && s.annotations.iter().any(|a| registry::lookup(&a.keyword.name) == Some(kind))
        });
        if carries && names_fresh {
            break;
        }
    }
    out
}

/// Apply `batch` (from [`independent_batch`]) as one round: the driver removes every consumed
/// annotation at once (as a single step would, each with its [`removal_span`]), every step runs
/// on that one text and parse, and all edits are applied together and the result parsed once; a
/// refused step gets its annotation back. `None` if the round could not be completed (the
/// caller then falls back to single steps).
fn round_reparsed(r: &Attempt, names: &mut NameGen) -> Option<Done> {
    let Attempt { st, opts, batch, refused } = *r;
    let mut removals = EditSet::new();
    for (_, req) in batch {
        removals.push(Edit::delete(removal_span(&st.text, req.annotation.span)));
    }
    let text1 = removals.apply(&st.text).ok()?;
    let parsed1 = parse(&text1, &st.reparse);
    if parsed1.has_errors() {
        return None;
    }
    let sites1 = sites(&parsed1.program);
    let layout = Layout::detect(&text1);
    let mut all = EditSet::new();
    let mut reports = Vec::new();
    let mut applied = 0;
    // Where each refused annotation goes back (in `text1`), and its text.
    let mut restore: Vec<(usize, &str)> = Vec::new();
    for (site, req) in batch {
        let ann = &req.annotation;
        let removal = removal_span(&st.text, ann.span);
        let point = removals.map_offset(removal.start()).unwrap_or(removal.start());
        let key = removals.map_offset(site.keyword.start())?;
        let site1 = sites1.iter().find(|s| s.keyword.start() == key && s.kind == site.kind)?;
        let mut ctx = Ctx {
            src: &text1,
            parsed: &parsed1,
            layout: layout.clone(),
            names: &mut *names,
            timeout_ms: State::timeout_ms(opts),
            annotation_text: Some(ann.span.text(&st.text).to_string()),
        };
        // Spans over `text1` are reported over the text before the round.
        let back = |sp: Span| -> Span {
            let f = |o: usize| unmap(&removals, o);
            Span::new(f(sp.start()), f(sp.end()))
        };
        match run(&mut ctx, site1, &req.params) {
            Ok(mut a) => {
                applied += 1;
                all.extend(a.edits);
                a.diagnostics.extend(suffix_notes(&mut *names, site1.keyword));
                if !a.diagnostics.is_empty() {
                    reports.push((false, relabel(a.diagnostics, back)));
                }
            }
            Err(diags) => {
                // A refused step writes nothing: its names need no note.
                names.take_suffixed();
                let diags = requested_here(relabel(diags, back), &req.params, ann);
                reports.push((true, diags));
                restore.push((point, removal.text(&st.text)));
            }
        }
    }
    let kept = all.clone();
    for (p, t) in &restore {
        all.insert(*p, *t);
    }
    let out = all.apply(&text1).ok()?;
    let parsed = parse(&out, &st.reparse);
    if parsed.has_errors() {
        // Which step produced it is unknown here: the single-step path finds and reports it.
        return None;
    }
    // Earlier refusals lie outside every edit of the round; this round's refusals are restored
    // at their points, after the kept edits and the restorations before them.
    let restored_before =
        |p: usize| -> usize { restore.iter().filter(|(q, _)| *q < p).map(|(_, t)| t.len()).sum() };
    let to_out = |o1: usize| kept.map_offset(o1).map(|o| o + restored_before(o1));
    let mut now: Vec<usize> =
        refused.iter().filter_map(|&o| removals.map_offset(o).and_then(to_out)).collect();
    for (p, t) in &restore {
        let lead = t.len() - t.trim_start().len();
        if let Some(o) = to_out(*p) {
            now.push(o + lead);
        }
    }
    let written = all.written_ranges();
    Some(Done { text: out, parsed, written, reports, applied, refused: now })
}

/// The offset in the text before `removals` of offset `o` of the text after them.
fn unmap(removals: &EditSet, o: usize) -> usize {
    let mut sorted: Vec<&Edit> = removals.edits().iter().collect();
    sorted.sort_by_key(|e| e.lo);
    let mut o = o;
    for e in sorted {
        if e.lo <= o {
            o += e.hi - e.lo;
        }
    }
    o
}

/// Apply `batch` as one round (see [`round_reparsed`] for the meaning), trying first without
/// the parse of the text with the annotations removed: each consumed annotation is replaced by
/// a marker comment of the same length, so the parse of the current text stays valid for the
/// steps; after the edits, each marker is removed from the output the way [`removal_span`]
/// removes an annotation (or, for a refused step, turned back into its annotation). When a
/// marker does not come out as expected, the round is redone with the removal parse.
pub(super) fn round(
    st: &mut State,
    names: &mut NameGen,
    opts: &DriverOptions,
    batch: &[(Site, Request)],
    res: &mut DriverResult,
    refused: &mut Vec<usize>,
) -> bool {
    // A failed attempt must leave the names as they were: the fallback allocates them again.
    let names_before = names.clone();
    let attempt = Attempt { st, opts, batch, refused };
    let done = round_marked(&attempt, names).or_else(|| {
        *names = names_before.clone();
        round_reparsed(&attempt, names)
    });
    let Some(done) = done else {
        *names = names_before;
        return false;
    };
    let before_file = st.file();
    for (is_refusal, diags) in done.reports {
        if is_refusal {
            res.refused += 1;
        }
        res.reports.push(Report { file: before_file.clone(), diagnostics: diags });
    }
    *refused = done.refused;
    names.add_written(&done.text, &done.written);
    res.applied += done.applied;
    st.step += done.applied;
    st.text = done.text;
    // Freed on the parser's thread while the next steps run.
    front::dispose(std::mem::replace(&mut st.parsed, done.parsed));
    true
}

/// What both ways of running a round read.
#[derive(Clone, Copy)]
struct Attempt<'a> {
    st: &'a State,
    opts: &'a DriverOptions,
    batch: &'a [(Site, Request)],
    refused: &'a [usize],
}

/// What a round produced: the new text and its parse, the ranges it wrote, the reports
/// (refusal or not), the number of applied steps, and where the refused annotations (earlier
/// ones and this round's) are in the new text.
struct Done {
    text: String,
    parsed: Parsed,
    written: Vec<(usize, usize)>,
    reports: Vec<(bool, Vec<Diagnostic>)>,
    applied: usize,
    refused: Vec<usize>,
}

/// The marker standing for the `i`-th annotation of a round, `len` bytes long (at least 4: an
/// annotation is longer than `gpuopt;`): a block comment of control characters, which no PVL
/// text of ours contains.
fn marker(i: usize, len: usize) -> Option<String> {
    let id = format!("{i}");
    (len >= id.len() + 5).then(|| format!("/*{id}{}*/", "\u{1}".repeat(len - 4 - id.len())))
}

/// Whether the annotation at `sp` stands alone on its line and no comment follows it before
/// the next token.
fn plain_line(text: &str, sp: Span) -> bool {
    if !edit::alone_on_line(text, sp) {
        return false;
    }
    let rest = text[sp.end()..].trim_start();
    !(rest.starts_with("//") || rest.starts_with("/*"))
}

fn round_marked(r: &Attempt, names: &mut NameGen) -> Option<Done> {
    let Attempt { st, opts, batch, refused } = *r;
    let mut marking = EditSet::new();
    let mut markers = Vec::new();
    for (i, (_, req)) in batch.iter().enumerate() {
        let sp = req.annotation.span;
        // Removing an annotation from the text moves the start of its construct to the next
        // token, so comments around it end up before the rewritten construct; a marker keeps
        // them inside. Such annotations take the other path.
        if !plain_line(&st.text, sp) {
            return None;
        }
        let m = marker(i, sp.len())?;
        if st.text.contains(&m) {
            return None;
        }
        marking.replace(sp, m.clone());
        markers.push(m);
    }
    let marked = marking.apply(&st.text).ok()?;
    let layout = Layout::detect(&marked);
    let mut all = EditSet::new();
    let mut reports = Vec::new();
    let mut applied_steps = Vec::new();
    for (i, (site, req)) in batch.iter().enumerate() {
        let mut ctx = Ctx {
            src: &marked,
            parsed: &st.parsed,
            layout: layout.clone(),
            names: &mut *names,
            timeout_ms: State::timeout_ms(opts),
            annotation_text: Some(req.annotation.span.text(&st.text).to_string()),
        };
        match run(&mut ctx, site, &req.params) {
            Ok(mut a) => {
                all.extend(a.edits);
                a.diagnostics.extend(suffix_notes(&mut *names, site.keyword));
                if !a.diagnostics.is_empty() {
                    reports.push((false, a.diagnostics));
                }
                applied_steps.push(i);
            }
            Err(diags) => {
                names.take_suffixed();
                reports.push((true, requested_here(diags, &req.params, &req.annotation)));
            }
        }
    }
    let out = all.apply(&marked).ok()?;
    // An applied step's marker comes out once per copy the step made of the loop's prefix (a
    // merge in remainder mode keeps the loop twice): each is removed, as the annotation is from
    // the text a single step works on. A refused step's marker comes out once, and turns back
    // into its annotation.
    let mut fix = EditSet::new();
    let mut kept = Vec::new();
    for (i, m) in markers.iter().enumerate() {
        let at: Vec<usize> = out.match_indices(m.as_str()).map(|(o, _)| o).collect();
        if applied_steps.contains(&i) {
            if at.is_empty() {
                return None;
            }
            for o in at {
                fix.push(Edit::delete(removal_span(&out, Span::new(o, o + m.len()))));
            }
        } else {
            let [o] = at.as_slice() else {
                return None;
            };
            fix.replace(Span::new(*o, o + m.len()), batch[i].1.annotation.span.text(&st.text));
            kept.push(*o);
        }
    }
    let text = fix.apply(&out).ok()?;
    let parsed = parse(&text, &st.reparse);
    if parsed.has_errors() {
        return None;
    }
    // Earlier refusals lie outside every edit (markers keep every length), this round's are
    // where their markers were.
    let mut now: Vec<usize> =
        refused.iter().filter_map(|&o| all.map_offset(o).and_then(|o| fix.map_offset(o))).collect();
    // A restored annotation starts where its marker started, moved by the edits before it.
    let moved_to = |o: usize| -> usize {
        let delta: isize = fix
            .edits()
            .iter()
            .filter(|e| e.hi <= o)
            .map(|e| e.text.len() as isize - (e.hi - e.lo) as isize)
            .sum();
        (o as isize + delta) as usize
    };
    now.extend(kept.iter().map(|&o| moved_to(o)));
    let mut written: Vec<(usize, usize)> = all
        .written_ranges()
        .into_iter()
        .filter_map(|(lo, hi)| Some((fix.map_offset(lo)?, fix.map_offset(hi).unwrap_or(hi))))
        .collect();
    written.extend(fix.written_ranges());
    Some(Done { text, parsed, written, reports, applied: applied_steps.len(), refused: now })
}
