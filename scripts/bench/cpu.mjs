// Where a server's CPU time goes: the CPU time a process has used (Linux /proc), and a small reader
// of the V8 CPU profiles `node --cpu-prof` writes at exit (self time per function).
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';

// ---------------------------------------------------------------------------------------------
// CPU time of a process

let ticksPerSecond;

/** The unit of /proc's CPU times: clock ticks per second (`getconf CLK_TCK`, usually 100). */
export function clockTicks() {
  ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  return ticksPerSecond;
}

/**
 * The CPU time (user + system, all its threads) process `pid` has used so far, in ms, from
 * /proc/<pid>/stat; undefined where there is no /proc (not Linux) or the process is gone.
 */
export function processCpuMs(pid) {
  let stat;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) is in parentheses and may hold spaces: count from after it, where
  // field 3 (state) comes first, so utime (field 14) and stime (15) are the 12th and 13th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicks();
}

/** Now on the clock of V8's profiles (CLOCK_MONOTONIC, as process.hrtime), in µs. */
export const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);

// ---------------------------------------------------------------------------------------------
// CPU profiles (--cpu-prof)

/** The profile Node wrote into `dir` (--cpu-prof-dir) when it exited; there must be exactly one. */
export function readProfile(dir) {
  const files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
  if (files.length !== 1) throw new Error(`expected one .cpuprofile in ${dir}, found ${files.length} (did the server exit gracefully?)`);
  return JSON.parse(readFileSync(path.join(dir, files[0]), 'utf8'));
}

// Not functions: the profiler's names for time spent outside JavaScript and native code it knows.
const IDLE = '(idle)';
const PROGRAM = '(program)';

/**
 * Self time per function of a profile: each sample's interval (to the next sample; the last one's
 * to the end of the profile) goes to the function on top of its stack. A function appears once
 * per call path among the nodes: those with the same name, file, line and column are one.
 * `window` ({fromUs, toUs} on monotonicUs's clock) keeps the samples taken inside it only.
 * Returns `{ functions: [{name, url, line, ms}] (most first), idleMs, programMs, busyMs, samples }`
 * where busyMs leaves (idle) and (program) out.
 */
export function selfTimes(profile, window) {
  const frames = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
  const byFunction = new Map();
  let at = profile.startTime;
  let samples = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i];
    const until = i + 1 < profile.samples.length ? at + profile.timeDeltas[i + 1] : profile.endTime;
    if (window && (at < window.fromUs || at >= window.toUs)) continue;
    samples++;
    const f = frames.get(profile.samples[i]);
    const key = `${f.functionName}\0${f.url}\0${f.lineNumber}\0${f.columnNumber}`;
    const entry = byFunction.get(key) ?? { name: f.functionName || '(anonymous)', url: f.url, line: f.lineNumber + 1, ms: 0 };
    entry.ms += Math.max(0, until - at) / 1000;
    byFunction.set(key, entry);
  }
  const all = [...byFunction.values()];
  const total = (name) => all.filter((e) => e.name === name).reduce((s, e) => s + e.ms, 0);
  const functions = all.filter((e) => e.name !== IDLE && e.name !== PROGRAM).sort((a, b) => b.ms - a.ms);
  return { functions, idleMs: total(IDLE), programMs: total(PROGRAM), busyMs: functions.reduce((s, e) => s + e.ms, 0), samples };
}

/** A function's place: its file relative to `root` (node: and other URLs as they are) and line. */
function place(entry, root) {
  if (!entry.url) return '(native)';
  const file = entry.url.startsWith('file://') ? path.relative(root, new URL(entry.url).pathname) : entry.url;
  return `${file}:${entry.line}`;
}

/**
 * Lines of the `top` functions by self time (selfTimes' answer): ms and % of the busy time (that
 * is, (idle) and (program) left out, shown on the first line), name, file:line.
 */
export function topSelfTimeLines(times, { top = 15, root, indent = '    ' } = {}) {
  const lines = [
    `${indent}${times.samples} samples: ${times.busyMs.toFixed(0)} ms in functions (the 100 % below); apart: (program) ${times.programMs.toFixed(0)} ms, (idle) ${times.idleMs.toFixed(0)} ms`,
    `${indent}${'self ms'.padStart(9)}${'%'.padStart(8)}  ${'function'.padEnd(40)}  file:line`,
  ];
  for (const e of times.functions.slice(0, top)) {
    const share = times.busyMs > 0 ? (e.ms / times.busyMs) * 100 : 0;
    lines.push(
      `${indent}${e.ms.toFixed(1).padStart(9)}${`${share.toFixed(1)} %`.padStart(8)}  ${e.name.slice(0, 40).padEnd(40)}  ${place(e, root)}`,
    );
  }
  return lines;
}
