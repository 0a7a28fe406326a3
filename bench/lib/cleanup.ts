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

  /** Runs every step, newest first; a failing step does not stop the others. */
  async runAll(): Promise<void> {
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
