// Batch driver for Viper's Silicon, embedded in alpine-rs (src/verify/silicon.rs) and compiled at
// install time against the pinned silicon.jar (nagini 1.2.0, Silicon 1.1-SNAPSHOT 3e24b7a8+).
//
// It keeps one JVM alive so that Silicon's class loading and JIT warm-up are paid once, not once per
// file. Usage:
//
//   java -Xss32m -XX:+UseSerialGC -cp silicon.jar:<dir> AlpineSilicon --z3Exe Z3 [silicon options]
//
// Protocol (all fields separated by one TAB; messages are escaped, see esc()):
//
//   stdout at start:  READY
//   request (stdin):  VERIFY <id> <path.vpr> <timeout_s>        (timeout 0 = none)
//                     QUIT
//   answer (stdout):  BEGIN <id>
//                     ERR   <id> <fullId> <pos> <reasonPos> <message>
//                     OTHER <id> <fullId> <pos> <message>
//                     END   <id> VERIFIED|FAILED|TIMEOUT|CRASH <ms>
//
// <pos> is "file@l.c--l.c", "file@l.c", or "?" when the node has no source position.
//
// Silicon's own reporter writes to System.out; that is redirected to stderr so that stdout carries
// only protocol lines.

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import scala.Option;
import scala.jdk.javaapi.CollectionConverters;
import viper.silicon.SiliconRunnerInstance;
import viper.silver.ast.AbstractSourcePosition;
import viper.silver.ast.HasLineColumn;
import viper.silver.ast.Position;
import viper.silver.verifier.AbortedExceptionally;
import viper.silver.verifier.AbstractError;
import viper.silver.verifier.Failure;
import viper.silver.verifier.TimeoutOccurred;
import viper.silver.verifier.VerificationError;
import viper.silver.verifier.VerificationResult;

public final class AlpineSilicon {
    private AlpineSilicon() {}

    public static void main(String[] args) throws Exception {
        // Grab the real stdout before anything (Scala's Console, logback) captures System.out.
        PrintStream proto =
                new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
        System.setOut(System.err);

        List<String> baseArgs = Arrays.asList(args);
        BufferedReader in =
                new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        proto.println("READY");

        String line;
        while ((line = in.readLine()) != null) {
            String[] f = line.split("\t", -1);
            if (f.length == 1 && f[0].equals("QUIT")) {
                break;
            }
            if (f.length != 4 || !f[0].equals("VERIFY")) {
                proto.println("BAD\t" + esc(line));
                continue;
            }
            verify(proto, baseArgs, f[1], f[2], f[3]);
        }
        proto.flush();
        // Silicon may leave non-daemon threads behind; do not wait for them.
        System.exit(0);
    }

    private static void verify(PrintStream out, List<String> baseArgs, String id, String path,
            String timeout) {
        long t0 = System.nanoTime();
        out.println("BEGIN\t" + id);
        String status;
        SiliconRunnerInstance runner = new SiliconRunnerInstance();
        try {
            List<String> a = new ArrayList<>(baseArgs);
            if (!timeout.equals("0")) {
                a.add("--timeout");
                a.add(timeout);
            }
            a.add(path);
            runner.execute(CollectionConverters.asScala(a).toList(), runner.execute$default$2());
            status = report(out, id, runner);
        } catch (Throwable t) {
            out.println("OTHER\t" + id + "\tdriver.exception\t?\t" + esc(describe(t)));
            status = "CRASH";
        } finally {
            try {
                // Also stops the Z3 process(es) of this run.
                if (runner.verifier() != null) {
                    runner.verifier().stop();
                }
            } catch (Throwable t) {
                // Nothing useful to do: the result has been reported already.
            }
        }
        long ms = (System.nanoTime() - t0) / 1_000_000L;
        out.println("END\t" + id + "\t" + status + "\t" + ms);
    }

    private static String report(PrintStream out, String id, SiliconRunnerInstance runner) {
        // Parse and type errors are kept in errors(), with no verification result.
        List<AbstractError> errs = new ArrayList<>(CollectionConverters.asJava(runner.errors()));
        if (errs.isEmpty()) {
            Option<VerificationResult> r = runner.getVerificationResult();
            if (r.isEmpty()) {
                out.println("OTHER\t" + id + "\tdriver.noresult\t?\t"
                        + esc("Silicon produced no result (rejected options?)"));
                return "CRASH";
            }
            VerificationResult res = r.get();
            if (!(res instanceof Failure)) {
                return "VERIFIED";
            }
            errs.addAll(CollectionConverters.asJava(((Failure) res).errors()));
        }
        boolean timeout = false;
        boolean aborted = false;
        for (AbstractError e : errs) {
            if (e instanceof VerificationError) {
                VerificationError ve = (VerificationError) e;
                String reasonPos = "?";
                try {
                    reasonPos = pos(ve.reason().pos());
                } catch (Throwable t) {
                    // Some reasons have no offending node; leave the position unknown.
                }
                out.println("ERR\t" + id + "\t" + esc(ve.fullId()) + "\t" + pos(ve.pos()) + "\t"
                        + reasonPos + "\t" + esc(ve.readableMessage(false, false)));
            } else {
                timeout |= e instanceof TimeoutOccurred;
                aborted |= e instanceof AbortedExceptionally;
                out.println("OTHER\t" + id + "\t" + esc(e.fullId()) + "\t" + pos(e.pos()) + "\t"
                        + esc(e.readableMessage()));
            }
        }
        if (timeout) {
            return "TIMEOUT";
        }
        return aborted ? "CRASH" : "FAILED";
    }

    private static String pos(Position p) {
        if (!(p instanceof AbstractSourcePosition)) {
            return "?";
        }
        AbstractSourcePosition sp = (AbstractSourcePosition) p;
        String file = sp.file() == null || sp.file().getFileName() == null
                ? "" : sp.file().getFileName().toString();
        StringBuilder b = new StringBuilder(esc(file)).append('@').append(lc(sp.start()));
        Option<HasLineColumn> end = sp.end();
        if (end.isDefined()) {
            b.append("--").append(lc(end.get()));
        }
        return b.toString();
    }

    private static String lc(HasLineColumn p) {
        return p.line() + "." + p.column();
    }

    private static String describe(Throwable t) {
        StringBuilder b = new StringBuilder(t.toString());
        StackTraceElement[] st = t.getStackTrace();
        for (int i = 0; i < Math.min(8, st.length); i++) {
            b.append("\n  at ").append(st[i]);
        }
        return b.toString();
    }

    // Keeps each protocol record on one line, and its fields free of TABs.
    private static String esc(String s) {
        if (s == null) {
            return "";
        }
        StringBuilder b = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '\\': b.append("\\\\"); break;
                case '\t': b.append("\\t"); break;
                case '\n': b.append("\\n"); break;
                case '\r': b.append("\\r"); break;
                default: b.append(c);
            }
        }
        return b.toString();
    }
}
