/** Teardown steps registered as resources start, run in reverse order exactly once. */
export class Cleanup {
  private readonly steps: Array<{ name: string; run: () => Promise<void> | void }> = [];

  /** Registers a teardown step; returns a function that runs it early (and unregisters it). */
  add(name: string, run: () => Promise<void> | void): () => Promise<void> {
    const step = { name, run };
    this.steps.push(step);
    return async () => {
      const i = this.steps.indexOf(step);
      if (i < 0) return;
      this.steps.splice(i, 1);
      await step.run();
    };
  }

  private running: Promise<void> | null = null;

  /**
   * Runs every step, newest first; a failing step does not stop the others. A call while a run
   * is under way waits for that run to end (a signal's cleanup and the program's own `finally`
   * both ask), so no caller goes on while a step is still stopping something.
   */
  runAll(): Promise<void> {
    this.running ??= this.drain().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async drain(): Promise<void> {
    while (this.steps.length) {
      const step = this.steps.pop();
      if (!step) break;
      try {
        await step.run();
      } catch (e) {
        process.stderr.write(`bench cleanup "${step.name}" failed: ${String(e)}\n`);
      }
    }
  }
}
