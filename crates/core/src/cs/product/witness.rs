//! The valid path that reaches an accepting state.

use super::*;

impl Search<'_> {
    /// The path that reaches top-level state `id`.
    pub(super) fn witness(&self, id: TopId) -> Option<Vec<NodeId>> {
        enum Item {
            Node(NodeId),
            Top(TopId),
            Path(PathId),
            Esc(EscId),
        }
        let mut out = Vec::new();
        let mut stack = vec![Item::Top(id)];
        while let Some(it) = stack.pop() {
            match it {
                Item::Node(v) => {
                    out.push(v);
                    if out.len() > MAX_WITNESS {
                        return None;
                    }
                }
                Item::Top(mut s) => loop {
                    stack.push(Item::Node(self.top[s].0));
                    match self.top.pred[s] {
                        Pred::Root => break,
                        Pred::Step(p) => s = p,
                        Pred::Summary { call, exit } => {
                            stack.push(Item::Path(exit));
                            s = call;
                        }
                        Pred::Landing { call, esc } => {
                            stack.push(Item::Esc(esc));
                            s = call;
                        }
                    }
                },
                Item::Path(mut s) => loop {
                    stack.push(Item::Node(self.path[s].1));
                    match self.path.pred[s] {
                        Pred::Root => break,
                        Pred::Step(p) => s = p,
                        Pred::Summary { call, exit } => {
                            stack.push(Item::Path(exit));
                            s = call;
                        }
                        Pred::Landing { call, esc } => {
                            stack.push(Item::Esc(esc));
                            s = call;
                        }
                    }
                },
                Item::Esc(e) => {
                    let r = self.esc[e];
                    stack.push(match r.inner {
                        Body::Path(p) => Item::Path(p),
                        Body::Esc(x) => Item::Esc(x),
                    });
                    if let Some(c) = r.call {
                        stack.push(Item::Path(c));
                    }
                }
            }
        }
        Some(out)
    }
}
