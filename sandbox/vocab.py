"""Word lists for the sandbox prose generator.

Each topic has a few hundred content words so that generated pages use a
realistic, topic-specific vocabulary; near-duplicate detection on shingles only
behaves as on the real web when pages of one site share words but not phrases.
Verbs are base forms; the generator derives third-person forms by rule, so the
lists avoid verbs whose -s form is irregular.
"""

from __future__ import annotations

from dataclasses import dataclass


def _words(text: str) -> tuple[str, ...]:
    """Split a whitespace-separated list, dropping repeats but keeping order."""
    return tuple(dict.fromkeys(text.split()))


@dataclass(frozen=True)
class Vocabulary:
    """Content words of one topic."""

    nouns: tuple[str, ...]
    verbs: tuple[str, ...]
    adjectives: tuple[str, ...]
    adverbs: tuple[str, ...]


# Words every topic may use, so topics overlap a little as real sites do.
GENERAL = Vocabulary(
    nouns=_words("""
        time way part example case point problem question answer idea detail
        reason result change number group area place week year day hour minute
        list note step choice rule word name page section line version order
        end start side kind sort level piece set"""),
    verbs=_words("""
        make need keep find show help start turn follow learn want allow
        describe explain mention suggest expect include contain provide
        depend change check note"""),
    adjectives=_words("""
        good new old different important small large simple useful clear
        common usual possible certain whole main full short long early late
        easy hard quick careful"""),
    adverbs=_words("""
        also often usually sometimes rarely always never already still
        quite rather really simply probably perhaps clearly"""),
)

PROGRAMMING = Vocabulary(
    nouns=_words("""
        function module object class method value argument parameter string
        list dictionary tuple integer float buffer file path directory socket
        thread process lock queue iterator generator exception error handler
        callback event loop coroutine task future timeout interval encoding
        decoder encoder parser token expression statement variable constant
        attribute property descriptor decorator closure scope namespace
        package import interpreter compiler bytecode frame stack heap memory
        reference pointer allocator cache index key hash table record field
        column row query cursor connection transaction session request
        response header payload message channel stream pipe signal sequence
        slice range array vector matrix element node tree graph edge vertex
        pattern regex match flag option setting configuration environment
        locale timezone timestamp date duration format template placeholder
        literal comment docstring annotation hint protocol interface mixin
        subclass instance constructor operator operand comparison assertion
        test fixture mock benchmark profile release platform library
        framework dependency wheel archive checksum digest certificate
        manager resource permission owner user mode pool worker scheduler
        executor backend frontend plugin extension hook registry schema
        migration snapshot checkpoint journal shard replica cluster tenant
        endpoint route handshake packet frame codec charset newline whitespace
        identifier keyword operator precedence grammar syntax semantics
        runtime garbage collector finalizer weakref proxy adapter wrapper
        facade factory builder visitor observer subscriber publisher topic
        partition offset watermark batch chunk page cursor limit quota
        retry backoff deadline heartbeat lease token credential secret
        signature nonce salt cipher key"""),
    verbs=_words("""
        return accept raise call define create open close read write parse
        format convert compare sort filter map reduce iterate yield await
        schedule cancel acquire release wait notify send receive connect bind
        listen encode decode compile execute evaluate import export load store
        cache truncate seek resolve validate register override inherit
        implement extend wrap unwrap copy clone serialize deserialize allocate
        initialize configure install update remove insert append replace
        split join strip compute measure report log propagate suppress ignore
        block spawn terminate inspect traverse generate emit buffer dispatch
        expose invoke instantiate annotate document deprecate benchmark
        profile trace lint refactor rebase merge publish deploy rollback
        migrate index hash sign verify encrypt decrypt compress expand
        normalize escape quote tokenize render"""),
    adjectives=_words("""
        optional default empty immutable mutable abstract concrete
        asynchronous synchronous blocking nonblocking global local private
        public internal external recursive iterative lazy eager binary textual
        numeric signed unsigned nested flat sorted unique valid invalid
        deprecated experimental stable portable native compatible incompatible
        explicit implicit dynamic static temporary persistent shared exclusive
        raw encoded compressed readable writable executable hidden visible
        current previous next first last final initial maximum minimum
        positive negative fast slow safe unsafe rare complex verbose quiet
        strict lenient primary secondary standard custom atomic idempotent
        reentrant deterministic cached stale transient durable concurrent
        sequential generic typed untyped ordered unordered"""),
    adverbs=_words("""
        typically automatically explicitly implicitly silently safely quickly
        slowly lazily eagerly internally directly indirectly recursively
        atomically concurrently sequentially transparently efficiently
        correctly deterministically"""),
)

COOKING = Vocabulary(
    nouns=_words("""
        onion garlic shallot leek carrot celery potato tomato pepper chili
        ginger lemon lime orange apple pear plum cherry raisin almond walnut
        hazelnut pistachio butter cream milk yogurt cheese egg flour sugar
        honey salt vinegar oil mustard stock broth sauce dough batter crust
        pastry loaf bread roll bun pancake crepe tart pie cake biscuit cookie
        custard pudding soup stew curry risotto pasta noodle dumpling rice
        barley lentil bean chickpea pea spinach kale cabbage cauliflower
        broccoli mushroom zucchini eggplant squash pumpkin fennel parsley
        basil thyme rosemary sage oregano mint dill coriander cumin paprika
        cinnamon nutmeg clove cardamom saffron vanilla chocolate cocoa coffee
        tea wine cider chicken beef pork lamb duck sausage bacon ham fish
        salmon cod trout mackerel shrimp mussel clam anchovy tofu pan pot
        skillet saucepan oven grill griddle tray tin bowl whisk spatula ladle
        knife board sieve colander blender mixer jar lid rack heat flame
        texture flavour aroma crumb glaze syrup marinade brine dressing
        garnish portion serving batch kitchen pantry market season harvest
        weekend dinner lunch breakfast supper guest family recipe method
        technique grandmother neighbour cupboard fridge freezer counter
        stove kettle teaspoon tablespoon cup pinch handful slice wedge
        fillet thigh breast shoulder shank rib crumble scone muffin brioche
        focaccia sourdough starter yeast semolina polenta couscous quinoa
        oat porridge granola jam chutney pickle relish salsa pesto
        mayonnaise vinaigrette gravy caramel meringue ganache icing"""),
    verbs=_words("""
        chop dice slice mince grate peel core crush whisk beat fold stir knead
        roll shape proof bake roast grill fry saute sear brown braise poach
        steam boil simmer reduce thicken season taste adjust drain rinse soak
        marinate coat dust sprinkle drizzle pour spread layer top garnish
        serve cool chill freeze thaw reheat cover uncover transfer combine
        mix blend puree strain toast caramelize melt soften line grease
        preheat cook prepare store rest cut add remove turn flip scatter
        squeeze zest halve quarter trim scrape shake tip pack wrap label
        portion skim baste glaze cream sift weigh measure"""),
    adjectives=_words("""
        golden crisp crunchy tender juicy silky creamy smooth thick thin
        fluffy light dense rich savoury sweet sour bitter salty spicy smoky
        tangy fragrant fresh ripe dried frozen roasted toasted grilled fried
        baked raw warm hot cold lukewarm chilled soft firm sticky flaky
        chewy moist hearty rustic classic seasonal homemade leftover whole
        chopped sliced minced grated softened melted generous medium heaped
        level shallow deep heavy nonstick buttery zesty earthy peppery
        nutty velvety glossy caramelised charred blistered"""),
    adverbs=_words("""
        gently slowly quickly briskly thoroughly lightly evenly carefully
        generously roughly finely occasionally constantly immediately briefly
        patiently"""),
)

UNIVERSITY = Vocabulary(
    nouns=_words("""
        student professor lecturer researcher assistant department faculty
        school college campus library laboratory seminar lecture course
        module syllabus exam assignment project thesis dissertation degree
        diploma semester term schedule credit grade committee board council
        dean chair office colloquium workshop conference journal paper
        article proceedings citation review grant funding proposal budget
        experiment hypothesis theory model method dataset sample measurement
        observation analysis evidence conclusion algorithm proof theorem
        lemma conjecture equation variable system network protocol
        architecture processor circuit sensor robot simulation visualization
        interface database compiler language logic semantics verification
        security privacy cryptography learning inference optimization
        statistics probability complexity computation software hardware
        cluster server storage energy climate population genome protein cell
        molecule particle signal image sound speech vision robotics ethics
        policy society history philosophy mathematics physics chemistry
        biology economics education alumni admission scholarship fellowship
        internship career industry partner collaboration community outreach
        event award prize deadline application requirement prerequisite
        enrollment tuition tutor cohort curriculum transcript advisor
        examiner defence benchmark testbed prototype framework toolkit
        compiler kernel scheduler workload latency throughput bandwidth
        accuracy precision recall classifier corpus annotation ontology
        taxonomy survey interview participant questionnaire"""),
    verbs=_words("""
        study teach lecture research investigate examine analyze model
        simulate measure observe collect evaluate test verify prove derive
        estimate predict classify design build implement develop deploy
        optimize publish present review supervise advise mentor fund award
        admit enroll graduate attend submit organize host invite discuss
        explore propose extend improve compare combine apply introduce cover
        require offer welcome announce join lead coordinate support
        characterize formalize generalize quantify replicate validate
        annotate benchmark survey"""),
    adjectives=_words("""
        academic scientific theoretical empirical experimental computational
        statistical formal applied interdisciplinary collaborative
        undergraduate graduate doctoral postdoctoral annual weekly
        introductory advanced intermediate elective mandatory senior junior
        visiting emeritus distinguished international national regional
        public open novel robust scalable efficient distributed parallel
        secure reliable accurate interpretable automated quantitative
        qualitative recent upcoming successful competitive prestigious
        rigorous practical foundational probabilistic symbolic numerical
        cognitive ethical"""),
    adverbs=_words("""
        recently currently jointly independently formally rigorously widely
        closely primarily broadly annually successfully empirically"""),
)

TRAVEL = Vocabulary(
    nouns=_words("""
        town village harbour coast beach cliff bay island river bridge road
        street square market festival fair parade concert museum gallery
        church chapel castle tower lighthouse pier ferry boat ship train
        station bus route trail path hill valley forest meadow garden park
        lake pond shore dune tide wave storm rain wind fog sunrise sunset
        weather season summer winter spring autumn visitor tourist resident
        neighbour council mayor officer police school library shop cafe
        bakery pub restaurant hotel inn guesthouse cottage campsite hostel
        ticket price fare timetable closure traffic parking construction
        project plan meeting vote budget charity volunteer club team match
        race regatta walk hike ride view landscape heritage history tradition
        story photo map guide tour trip journey weekend holiday evening
        morning afternoon crowd family child dog fisherman farmer artist
        author musician chef owner business opening anniversary celebration
        exhibition performance stall quay slipway estuary headland cove
        moor ridge footpath stile gate orchard vineyard brewery creamery
        library chandlery boatyard lifeboat coastguard lane terrace
        promenade bandstand carnival choir ceilidh raffle petition
        planning application development roundabout bypass"""),
    verbs=_words("""
        visit explore walk hike wander climb cross sail paddle swim cycle
        drive arrive depart return open close reopen celebrate host attend
        gather welcome announce report confirm warn urge plan approve reject
        delay cancel repair restore rebuild expand discover enjoy recommend
        photograph capture remember miss book reserve cost charge raise
        donate support join launch unveil mark honour commission"""),
    adjectives=_words("""
        local coastal rural historic scenic quiet busy crowded popular famous
        hidden remote sheltered rugged windy sunny rainy foggy stormy calm
        mild chilly warm bright colourful charming lively peaceful
        picturesque narrow steep winding sandy rocky green ancient medieval
        victorian modern annual seasonal weekly free affordable expensive
        accessible temporary permanent official unofficial tidal grassy
        wooded weathered restored"""),
    adverbs=_words("""
        finally recently eventually briefly locally nearby overnight early
        late already"""),
)

# The harder worlds' small sites: workshops and trades, health practices,
# outdoor clubs. Added after the first four topics, which they do not change.
CRAFTS = Vocabulary(
    nouns=_words("""
        workshop bench vice chisel plane saw drill bit clamp lathe kiln wheel
        glaze clay slip stoneware porcelain earthenware bowl jug mug vase
        timber plank board joint dovetail mortise tenon dowel screw nail glue
        varnish stain oil wax finish grain knot offcut veneer plywood oak ash
        walnut pine beech cherry maple birch cabinet drawer shelf frame door
        hinge handle pipe valve tap boiler radiator cistern washer seal leak
        drain fitting solder flux torch wrench spanner gauge meter fuse cable
        socket switch circuit bracket hook rail panel tile grout mortar brick
        plaster paint brush roller sander file rasp template pattern sketch
        measure tape square level pencil apron glove
        project commission repair restoration quote estimate invoice
        apprentice maker member volunteer tool toolbox cupboard kit printer
        filament resin laser cutter router jig stool chair table bed trunk
        chest box tray frame loom yarn thread fabric stitch seam quilt"""),
    verbs=_words("""
        cut plane sand drill clamp glue join fit shape carve turn throw trim
        fire glaze polish varnish stain seal fix repair replace restore
        measure mark check level square fasten screw tighten loosen solder
        wire flush bleed drain install assemble dismantle build craft design
        sketch prototype print engrave weld forge sharpen hone oil wax dust
        sweep label sort store lend borrow teach practise finish paint
        stitch weave sew knit quilt"""),
    adjectives=_words("""
        handmade wooden rough smooth sharp blunt solid hollow sturdy
        wobbly square straight curved flush tight loose seasoned green dry
        damp glazed unglazed matt glossy rustic delicate robust reclaimed
        salvaged antique vintage bespoke practical tidy messy leaky blocked
        copper brass steel galvanised insulated portable electric manual
        heavy light fine coarse precise"""),
    adverbs=_words("""
        neatly firmly gently patiently roughly precisely securely evenly
        carefully properly"""),
)

HEALTH = Vocabulary(
    nouns=_words("""
        patient clinic appointment practice dentist hygienist nurse therapist
        teacher student class session course lesson breath posture pose
        stretch spine hip shoulder knee ankle wrist neck jaw tooth gum enamel
        filling crown brace implant check-up cleaning x-ray anaesthetic
        treatment therapy exercise routine habit diet sleep stress tension
        balance strength flexibility mobility recovery injury pain ache
        symptom condition referral prescription insurance fee payment form
        waiting reception surgery practitioner mat block strap cushion studio
        retreat workshop beginner level meditation relaxation mindfulness
        awareness energy rhythm movement sequence series timetable booking
        cancellation policy consent record assessment plan advice leaflet
        toothbrush floss mouthwash fluoride sugar snack water hydration child
        parent family adult senior wellbeing health hygiene prevention"""),
    verbs=_words("""
        book cancel reschedule examine clean polish fill brush floss rinse
        stretch breathe relax bend twist hold release lengthen strengthen
        balance rest recover heal ease soothe prevent treat assess refer
        prescribe advise recommend register attend practise guide adjust
        support protect restore improve reduce monitor review welcome
        remind"""),
    adjectives=_words("""
        gentle painless routine regular urgent healthy sensitive sore stiff
        tight relaxed calm mindful restorative dynamic beginner intermediate
        advanced private affordable friendly experienced qualified
        registered preventive cosmetic orthodontic therapeutic daily weekly
        morning evening quiet bright spacious accessible comfortable
        supportive flexible strong steady"""),
    adverbs=_words("""
        gently regularly slowly calmly daily safely comfortably deeply
        steadily"""),
)

OUTDOORS = Vocabulary(
    nouns=_words("""
        kayak canoe paddle blade spraydeck buoyancy aid helmet drysuit
        wetsuit tide current eddy rapid weir river estuary creek bay cove
        headland beach slipway launch landing portage channel swell wave
        wind gust forecast chart compass map route trip session coach
        instructor member beginner course award club clubhouse boathouse
        trailer rack roof telescope mirror lens eyepiece mount tripod
        observatory dome star planet moon comet meteor galaxy nebula cluster
        constellation eclipse transit orbit horizon twilight dusk dawn night
        sky cloud darkness light pollution filter camera exposure image
        sketch logbook observer session season equinox solstice calendar
        talk lecture meeting volunteer visitor family child telescope
        field hill ridge path trail bird heron otter seal gull tern"""),
    verbs=_words("""
        paddle launch land portage capsize roll rescue steer brace sweep
        ferry glide drift navigate plan check observe watch spot track
        photograph sketch record log align focus point polish clean
        calibrate open close join train coach lead guide welcome meet gather
        share explore visit camp pitch pack load unload rinse dry store"""),
    adjectives=_words("""
        calm choppy rough sheltered exposed tidal sandy rocky shallow deep
        fast slow dark clear cloudy hazy bright faint distant nearby
        northern southern eastern western rising setting waxing waning
        full partial total annual weekly monthly beginner advanced safe
        cold wet windy sunny clear-sky quiet remote coastal inland"""),
    adverbs=_words("""
        safely slowly steadily quietly carefully early late nightly
        briefly"""),
)

TOPICS: dict[str, Vocabulary] = {
    "programming": PROGRAMMING,
    "cooking": COOKING,
    "university": UNIVERSITY,
    "travel": TRAVEL,
    "crafts": CRAFTS,
    "health": HEALTH,
    "outdoors": OUTDOORS,
}

# Commercial phrases for keyword stuffing (link farms, doorways, cloaking, hidden text).
SPAM_PHRASES = tuple(
    " ".join(phrase.split())
    for phrase in """cheap flights, last minute flights, cheap holidays, best price, discount
    deals, online casino, casino bonus, free spins, poker jackpot, payday loans,
    quick loans, instant approval, no credit check, replica watches, designer
    bags, cheap pharmacy, buy online, lowest price, free shipping, weight loss,
    diet pills, miracle cure, hot offers, limited offer, click here, buy now,
    order now, save money, earn money, work from home, crypto profit, bitcoin
    investment, forex trading, guaranteed winner, hotel deals, cheap hotels,
    car rental, insurance quotes, cheap insurance, mortgage refinance, debt
    relief, credit repair, best rates""".split(",")
)

FIRST_NAMES = _words("""
    Ada Alan Alice Amara Anika Arjun Beatrice Bruno Camille Carlos Chen Clara
    Daniel Dara Elena Emil Erin Farah Felix Fiona Gareth Greta Hana Hugo Ines
    Isaac Jana Jonas Julia Kai Karin Leo Lena Lucas Maya Mei Milan Nadia Noor
    Oliver Olga Omar Paula Pieter Priya Rafael Rosa Samir Sara Sofia Tariq
    Theo Uma Victor Wen Yara Zoe""")

LAST_NAMES = _words("""
    Abbott Achebe Bauer Bianchi Brennan Castillo Dahl Delacroix Eriksen
    Fischer Fontaine Garcia Grant Haddad Hartmann Ibarra Ishikawa Jansen
    Kowalski Kuznetsova Larsen Lindqvist Marsh Moreau Nakamura Novak Okafor
    Olsen Petrova Quinn Ramirez Rossi Sato Schmidt Silva Sorensen Tanaka
    Thorne Varga Vasquez Weber Whitfield Yilmaz Zhang Zielinski""")

PLACE_NAMES = tuple(
    name.strip()
    for name in """Harbourtown, Kestrel Point, Saltmarsh, Gullhaven, Eastcombe,
    Westering, Brackley, Fernhollow, Rook Island, Mallow Bay, Tidewater,
    Lantern Hill, Oxley, Cray Dunmore, Pebbleford, Heronsgate, Cliffend,
    Marram Sands, Copperwick, Ashby Wick""".split(",")
)

# Function words shared by all templates; listed so tests and tools can tell
# template words from content words.
DETERMINERS = ("the", "a", "this", "that", "every", "each", "one")
PLURAL_DETERMINERS = ("the", "these", "those", "some", "many", "several", "most", "few", "all")
PREPOSITIONS = (
    "in", "on", "with", "without", "for", "from", "into", "after", "before",
    "during", "under", "over", "near", "behind", "across", "through", "against",
    "beside", "beyond", "within",
)
MODALS = ("can", "should", "may", "must", "will", "might", "could", "would")
CONNECTIVES = (
    "However", "Meanwhile", "In practice", "For this reason", "Even so",
    "As a rule", "In most cases", "At first", "Later", "Nevertheless",
    "On the other hand", "In short", "Of course", "By contrast", "Afterwards",
)
