// The view's copy of a data source's snapshot: sections in order, each with its item identifiers in
// order, kept in step with listd by applying each `changes` event's stages exactly as listd's own
// Snapshot.apply does (PROTOCOL.md, "Changes"). Identifiers only: what a cell shows comes from dequeue.

export class SnapshotModel {
  /** @param {Array<{id: string, items: string[]}>} sections */
  constructor(sections) {
    this.sections = sections.map((section) => ({ id: section.id, items: section.items.slice() }));
  }

  /** The model of an attach reply's `sections` ([{id, data?, items: [id | {id, data}]}]). */
  static fromWire(sections) {
    return new SnapshotModel((sections || []).map((section) => ({
      id: section.id,
      items: (section.items || []).map((item) => (typeof item === "string" ? item : item.id)),
    })));
  }

  get itemCount() {
    return this.sections.reduce((count, section) => count + section.items.length, 0);
  }

  sectionIndex(id) {
    return this.sections.findIndex((section) => section.id === id);
  }

  /** The item at [section, item], or undefined. */
  itemAt(path) {
    const section = this.sections[path[0]];
    return section ? section.items[path[1]] : undefined;
  }

  /** [section, item] of an item, or null. O(items). */
  indexPathOf(id) {
    for (let s = 0; s < this.sections.length; s++) {
      const i = this.sections[s].items.indexOf(id);
      if (i >= 0) return [s, i];
    }
    return null;
  }

  /**
   * Applies one `changes` object ({stages: [...]}) stage by stage. Returns what the view must act on:
   * items and sections gone (their cells go back to listd), reloaded (a new cell: the items of reloaded
   * sections included; positions are read before their stage, as reloads name no items), reconfigured (the
   * same cell configured again, listd pushes it), inserted and moved (for the animation).
   * Throws when a stage does not fit (the view then attaches again).
   */
  apply(changes) {
    const effect = { gone: new Set(), goneSections: new Set(), reloaded: new Set(), reloadedSections: new Set(),
      reconfigured: new Set(), inserted: new Set(), moved: new Set() };
    for (const [index, stage] of (changes.stages || []).entries()) {
      try {
        this.applyStage(stage, effect);
      } catch (error) {
        throw new Error(`stage ${index}: ${error.message}`);
      }
    }
    for (const id of effect.inserted) effect.gone.delete(id);
    return effect;
  }

  applyStage(stage, effect) {
    const sections = this.sections;
    const checkSection = (index, what) => {
      if (!(index >= 0 && index < sections.length)) throw new Error(`${what} section ${index} is out of range`);
      return sections[index];
    };
    const checkPath = (path, what) => {
      const section = checkSection(path[0], what);
      if (!(path[1] >= 0 && path[1] < section.items.length)) throw new Error(`${what} item [${path}] is out of range`);
      return section.items[path[1]];
    };
    // 1. Reloads, at positions before the stage.
    for (const path of stage.itemReloads || []) effect.reloaded.add(checkPath(path, "reloaded"));
    for (const index of stage.sectionReloads || []) {
      // A reloaded section's items get new cells too (listd took theirs back), whatever registration now.
      const section = checkSection(index, "reloaded");
      effect.reloadedSections.add(section.id);
      for (const id of section.items) effect.reloaded.add(id);
    }
    // 2. Items out: deletes, and move sources (kept for re-insertion).
    const moved = (stage.itemMoves || []).map((move) => ({ id: checkPath(move.from, "moved"), to: move.to }));
    const deleted = (stage.itemDeletes || []).map((path) => checkPath(path, "deleted"));
    const out = new Set([...moved.map((move) => move.id), ...deleted]);
    if (out.size) {
      for (const section of sections) section.items = section.items.filter((id) => !out.has(id));
    }
    for (const id of deleted) effect.gone.add(id);
    // 3. Sections: deletes and move sources out, then inserts and move targets in ascending order.
    const movedSections = (stage.sectionMoves || []).map((move) => ({ section: checkSection(move.from, "moved"), to: move.to }));
    const deletedSections = (stage.sectionDeletes || []).map((index) => checkSection(index, "deleted"));
    const sectionsOut = new Set([...movedSections.map((move) => move.section), ...deletedSections]);
    for (const section of deletedSections) {
      effect.goneSections.add(section.id);
      for (const id of section.items) effect.gone.add(id);
    }
    let kept = sections.filter((section) => !sectionsOut.has(section));
    const sectionTargets = [
      ...(stage.sectionInserts || []).map((insert) => ({ index: insert.index, section: { id: insert.section, items: insert.items.map((item) => (typeof item === "string" ? item : item.id)) }, inserted: true })),
      ...movedSections.map((move) => ({ index: move.to, section: move.section, inserted: false })),
    ].sort((a, b) => a.index - b.index);
    for (const target of sectionTargets) {
      if (target.index < 0 || target.index > kept.length) throw new Error(`section target ${target.index} is out of range`);
      kept.splice(target.index, 0, target.section);
      if (target.inserted) for (const id of target.section.items) effect.inserted.add(id);
    }
    this.sections = kept;
    // 4. Items in: inserts and move targets in ascending order of their index paths.
    const itemTargets = [
      ...(stage.itemInserts || []).map((insert) => ({ path: insert.indexPath, id: insert.item, inserted: true })),
      ...moved.map((move) => ({ path: move.to, id: move.id, inserted: false })),
    ].sort((a, b) => a.path[0] - b.path[0] || a.path[1] - b.path[1]);
    for (const target of itemTargets) {
      const section = this.sections[target.path[0]];
      if (!section || target.path[1] < 0 || target.path[1] > section.items.length) throw new Error(`item target [${target.path}] is out of range`);
      section.items.splice(target.path[1], 0, target.id);
      (target.inserted ? effect.inserted : effect.moved).add(target.id);
    }
    // 5. Reconfigures, at positions after the stage.
    for (const change of stage.itemReconfigures || []) effect.reconfigured.add(checkPath(change.indexPath, "reconfigured"));
  }
}
