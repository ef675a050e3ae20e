// A thread's transcript as a view holds it: the pages read so far (oldest first), older
// pages on demand, what follows the last page after an event, and the items of the
// `thread/transcript` notification (a running root's words) shown after the pages' until
// a page gives them in their place. No `vscode` import: tested under plain Node.
import type { AlpClient, TranscriptItem, TranscriptItems, TranscriptPage, TranscriptRoot } from "./client";

/** Items per page (thread/transcript takes 1..500). */
export const PAGE = 100;
/** Pages read at most at once when catching up after an event. */
export const CATCH_UP_PAGES = 10;

export class TranscriptView {
  items: TranscriptItem[] = [];
  live: TranscriptItem[] = [];
  readonly roots = new Map<string, TranscriptRoot>();
  previous: string | undefined;
  next: string | undefined;
  moreBefore = false;
  /** whole tool inputs and results */
  full = false;
  private readonly seen = new Set<string>();

  constructor(
    readonly threadId: string,
    readonly pageSize = PAGE,
  ) {}

  private takeRoots(roots: TranscriptRoot[] | undefined): void {
    for (const root of roots ?? []) this.roots.set(root.id, root);
  }

  private settleLive(): void {
    this.live = this.live.filter((item) => !this.seen.has(item.cursor));
  }

  /** The page read from no cursor: the view starts over from it. */
  takeNewest(page: TranscriptPage): void {
    this.items = [];
    this.seen.clear();
    this.roots.clear();
    this.next = undefined;
    this.takeNewer(page);
    this.previous = page.previous ?? undefined;
    this.moreBefore = page.moreBefore === true;
  }

  /** The page read `before: previous`: its items go first. */
  takeOlder(page: TranscriptPage): void {
    const older = page.items.filter((item) => !this.seen.has(item.cursor));
    for (const item of older) this.seen.add(item.cursor);
    this.items = [...older, ...this.items];
    this.takeRoots(page.roots);
    this.previous = page.previous ?? undefined;
    this.moreBefore = page.moreBefore === true;
    this.settleLive();
  }

  /** A page read `after: next`: its items go last; one held already (a report given again
   *  with later entries) is replaced in place. Whether more follow. */
  takeNewer(page: TranscriptPage): boolean {
    for (const item of page.items) {
      if (this.seen.has(item.cursor)) {
        this.items = this.items.map((held) => (held.cursor === item.cursor ? item : held));
      } else {
        this.seen.add(item.cursor);
        this.items.push(item);
      }
    }
    this.takeRoots(page.roots);
    if (page.next) this.next = page.next;
    this.settleLive();
    return page.moreAfter === true;
  }

  /** A notification's items: after the pages' until a page gives them; once each. */
  takeLive(notification: TranscriptItems): void {
    this.takeRoots(notification.roots);
    for (const item of notification.items) {
      if (this.seen.has(item.cursor)) {
        this.items = this.items.map((held) => (held.cursor === item.cursor ? item : held));
        continue;
      }
      const at = this.live.findIndex((held) => held.cursor === item.cursor);
      if (at >= 0) this.live[at] = item;
      else this.live.push(item);
    }
  }

  /** Everything shown, oldest first. */
  shown(): TranscriptItem[] {
    return [...this.items, ...this.live];
  }

  /** Read the newest page (the view starts over). */
  async load(client: AlpClient): Promise<void> {
    this.takeNewest(await client.transcript(this.threadId, { limit: this.pageSize, full: this.full }));
  }

  /** Read the older page; false at the start of the thread. */
  async older(client: AlpClient): Promise<boolean> {
    if (!this.moreBefore || !this.previous) return false;
    this.takeOlder(await client.transcript(this.threadId, { before: this.previous, limit: this.pageSize, full: this.full }));
    return true;
  }

  /** Read what follows the last page (at most CATCH_UP_PAGES pages). */
  async catchUp(client: AlpClient): Promise<void> {
    if (this.next === undefined) return this.load(client);
    for (let i = 0; i < CATCH_UP_PAGES; i++) {
      const page = await client.transcript(this.threadId, { after: this.next, limit: this.pageSize, full: this.full });
      if (!this.takeNewer(page)) break;
    }
  }
}
