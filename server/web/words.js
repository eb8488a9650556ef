// The daemon's messages are the CLI's (the API and `--json` answer the same
// JSON), so their advice names command-line flags: "rerun with --replace",
// "review it (--dry-run)". On this page that advice is a button, so the
// words here say it the page's way; the buttons themselves are offered by
// app.js from the error codes. Plain JavaScript, no dependencies; it runs
// before app.js and gives it window.ReasonixWords.
'use strict';

(() => {
  // FLAG_WORDS names, in words, what each flag of the CLI asks for.
  const FLAG_WORDS = {
    replace: 'replacing installed plugins', link: 'linking a folder', 'allow-unpinned': 'unpinned entries allowed',
    offline: 'offline', refresh: 'asking again', force: 'removing anyway', name: 'an entry selected',
  };

  // ADVICE rewrites the CLI's advice, most specific first. Each is a
  // [pattern, replacement] applied in turn to every message shown.
  const ADVICE = [
    [/\(rerun with --replace to replace them\)/g, '(Replace installs these in place of them)'],
    [/;? ?rerun with --replace to replace (it|them)/g, (_, x) => (x === 'it' ? '; Replace installs this one in its place' : '; Replace installs these in their place')],
    [/nothing to do \(--replace reinstalls it\)/g, 'nothing to do (Reinstall installs it again)'],
    [/review it \(--dry-run\) and approve that/g, 'review it again and approve that'],
    [/remove (it|them) first, or rerun with --force \(/g, 'remove $1 first, or remove it anyway ('],
    [/disable (it|them) first, or rerun with --force \(/g, 'disable $1 first, or disable it anyway ('],
    [/or rerun with --force to keep them installed, unlinked from it/g, 'or remove it anyway to keep them installed, unlinked from it'],
    [/ \(--offline plans from the cache without asking\)/g, ''],
    [/; --refresh asks again\)/g, '; Ask again asks the host again)'],
    [/\(--allow-unpinned pins the ref's current head\)/g, '(pinning unpinned entries at their current head would move it)'],
    [/or install with --allow-unpinned to pin the ref's current head at plan time/g, 'or pin unpinned entries at their current head when planning'],
    [/--link needs a (local )?folder/g, 'linking needs a $1folder'],
    [/; --name does not go with it/g, ': no other entry can be selected with it'],
    [/it selected --name ("[^"]*"), this selects ("[^"]*")/g, 'it selected $1, this selects $2'],
    [/it was made (with|without) --([a-z-]+)/g, (_, w, f) => 'it was made ' + w + ' ' + (FLAG_WORDS[f] || f)],
    [/add one with: reasonix marketplace add SOURCE/g, 'add one on the Marketplaces screen'],
    [/; run `reasonix plugin doctor [^`]*`, then reinstall it with --replace/g, '; reinstall it from its source (Replace) to repair it'],
    [/ \(or plan --offline from the cache\)/g, ' (or plan from the cache, offline)'],
    [/give plugin names or --all, not both/g, 'give plugin names or all of them, not both'],
    [/name the plugins to update, or --all/g, 'name the plugins to update, or all of them'],
    [/update --all --marketplace ([^\s,;:]+)/g, 'update of the plugins of $1'],
    [/update --all/g, 'update of all plugins'],
    // What is left: a flag said in words, never as a flag.
    [/`(reasonix [^`]*?)((?: --[a-z][a-z-]*)+)`/g, (_, cmd, flags) => '`' + cmd.trim() + '` (' + flagWords(flags) + ')'],
    [/(^|[\s(])--([a-z][a-z-]*)/g, (_, pre, f) => pre + (FLAG_WORDS[f] || 'the ' + f + ' option')],
  ];

  function flagWords(flags) {
    return flags.trim().split(/\s+/).map((f) => {
      const name = f.replace(/^--/, '');
      return FLAG_WORDS[name] || 'the ' + name + ' option';
    }).join(', ');
  }

  // pageText is a daemon message in this page's words.
  function pageText(s) {
    let out = String(s);
    for (const [re, to] of ADVICE) out = out.replace(re, to);
    return out;
  }

  // suggestion is the source a refusal suggests ("did you mean X?"), or
  // null: the page offers it as a button rather than as text to retype.
  function suggestion(s) {
    const m = /did you mean (\S+?)\?/.exec(String(s || ''));
    return m ? m[1] : null;
  }

  window.ReasonixWords = Object.freeze({ pageText, suggestion });
})();
