package io.zkrecipes;

/** How an instance's node lives (Curator's {@code ServiceType}). */
public enum ServiceType {
    /** An ephemeral node: it goes with its registrant's session (and is made again under the next one). */
    DYNAMIC,
    /** A persistent node, for instances registered on another's behalf. */
    STATIC,
    /** A persistent node never purged by anybody but its owner. */
    PERMANENT,
    /** An ephemeral sequential node: several registrations of one id each get a node. */
    DYNAMIC_SEQUENTIAL
}
