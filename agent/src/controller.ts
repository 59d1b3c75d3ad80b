export interface Module {
  name: string;
  start(): void | Promise<void>;
  stop(): void | Promise<void>;
}

/**
 * Starts modules in order and stops them in reverse, so that whatever produces records stops (and flushes)
 * while whatever stores and sends them is still running. A failed start stops what already started.
 */
export class Controller {
  private started: Module[] = [];
  private stopping: Promise<void> | undefined;

  constructor(private readonly modules: Module[], private readonly log: (message: string) => void = () => {}) {}

  async start(): Promise<void> {
    for (const module of this.modules) {
      try {
        await module.start();
        this.started.push(module);
      } catch (error) {
        this.log(`${module.name} failed to start: ${(error as Error).message}`);
        await this.stop();
        throw error;
      }
    }
  }

  /** Idempotent; errors of one module do not keep the others from stopping. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      for (const module of [...this.started].reverse()) {
        try {
          await module.stop();
        } catch (error) {
          this.log(`${module.name} failed to stop cleanly: ${(error as Error).message}`);
        }
      }
      this.started = [];
    })();
    return this.stopping;
  }
}
